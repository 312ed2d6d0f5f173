import { SetMetadata } from '@nestjs/common';

export const OWN_ORIGIN_POLICY = 'bulkhead:own-origin-policy';

/**
 * Marks routes that judge the web pages calling them themselves (`/mcp`, with `mcp.allowedOrigins`
 * and its own answer to a refused page): the containment guard leaves their anonymous callers to
 * that, and does not apply `auth.allowedOrigins` on top.
 */
export const OwnOriginPolicy = (): ClassDecorator & MethodDecorator => SetMetadata(OWN_ORIGIN_POLICY, true);
