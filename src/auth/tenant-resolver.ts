import type { Awaitable } from '../common';
import type { PlatformRequest } from '../common/nest';
import type { Caller } from './api-key-authenticator';

/**
 * Who is calling: the hook through which every route that takes a tenant gets one. The default
 * reads Bulkhead's own API keys; a company app that authenticates callers itself provides its
 * own (`BulkheadModule.forRoot({ tenantResolver: MyResolver })`), as it would override
 * `ThrottlerGuard.getTracker`. It runs in a guard, before any interceptor.
 *
 * A tenant must come from something the caller proved (a verified key or token), never from
 * the body, a query string or model output. Return `known: true` only for tenants the app
 * vouches for: unknown callers are routed to the isolated pool. Throw
 * `new ResilienceError('unauthorized', ...)` to refuse a caller with 401.
 *
 * `request` is the platform's own: a `FastifyRequest` on `@nestjs/platform-fastify`, an Express
 * `Request` on `@nestjs/platform-express`. An override may declare either type (or read only
 * `headers`, which both have, to serve both).
 */
export abstract class TenantResolver {
  abstract resolve(request: PlatformRequest): Awaitable<Caller>;
}
