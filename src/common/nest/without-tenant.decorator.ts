import { SetMetadata } from '@nestjs/common';

export const WITHOUT_TENANT = 'bulkhead:without-tenant';

/**
 * Marks routes that take no API key and carry no tenant: health, metrics, and the admin
 * routes (which take the admin token instead). Every other route is authenticated and routed
 * by the containment guard.
 */
export const WithoutTenant = (): ClassDecorator & MethodDecorator => SetMetadata(WITHOUT_TENANT, true);
