import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AnonymousPages, ApiKeyTenantResolver, type Caller, TenantResolver } from '../auth';
import { isPromiseLike, NAME_PATTERN, ResilienceError } from '../common';
import {
  type CallState,
  callStateOf,
  OWN_ORIGIN_POLICY,
  type PlatformRequest,
  RouteCache,
  WITHOUT_TENANT,
} from '../common/nest';
import type { ContainmentDecision } from './containment-decision';
import { ContainmentRouter } from './containment-router.service';

/**
 * Registered globally, so every route (the tool routes and a company's own) runs for an
 * authenticated tenant in the pool its containment snapshot gives: steps 1 and 3 of the
 * pipeline. A guard, not an interceptor: on Nest + Fastify a global guard measured free
 * (1.01x) where a global no-op interceptor cost a quarter of the throughput (docs/pitfalls.md #12).
 * Routes marked `@WithoutTenant()` (health, metrics, admin) are left alone.
 */
@Injectable()
export class ContainmentRoutingGuard implements CanActivate {
  /** Whether a route takes a tenant, read once per route. */
  private readonly takesTenant = new RouteCache<boolean>(
    (handler, controller) =>
      !this.reflector.getAllAndOverride<boolean | undefined>(WITHOUT_TENANT, [handler, controller]),
  );

  /** Whether a route judges the pages calling it itself (`@OwnOriginPolicy()`, `/mcp`), read once per route. */
  private readonly ownOriginPolicy = new RouteCache<boolean>(
    (handler, controller) =>
      this.reflector.getAllAndOverride<boolean | undefined>(OWN_ORIGIN_POLICY, [handler, controller]) === true,
  );

  constructor(
    private readonly reflector: Reflector,
    @Inject(TenantResolver) private readonly resolver: TenantResolver,
    private readonly router: ContainmentRouter,
    private readonly anonymousPages: AnonymousPages,
  ) {
    this.ownKeys = resolver instanceof ApiKeyTenantResolver;
  }

  /** Tenants come from our API keys, which the config validated. */
  private readonly ownKeys: boolean;

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (context.getType() !== 'http' || !this.takesTenant.get(context)) return true;
    const http = context.switchToHttp();
    const request = http.getRequest<PlatformRequest>();
    const state = callStateOf(request, http.getResponse<object>());
    const caller = this.resolver.resolve(request);
    const page = this.ownOriginPolicy.get(context) ? undefined : request;
    if (isPromiseLike(caller))
      return Promise.resolve(caller).then((resolved) => this.routeCaller(state, resolved, page));
    return this.routeCaller(state, caller, page);
  }

  /**
   * @param page the request, when its route leaves the web pages calling it to this guard: a
   *   caller without a key is refused from a page `auth.allowedOrigins` does not allow
   *   ({@link AnonymousPages}), since a page can send no key but can send a request.
   */
  private routeCaller(state: CallState, caller: Caller, page?: PlatformRequest): boolean | Promise<boolean> {
    // An app's own resolver is checked: a tenant names metric series and store keys.
    if (!this.ownKeys && !NAME_PATTERN.test(caller.tenant)) {
      throw new ResilienceError('internal', 'the tenant resolver returned an invalid tenant name');
    }
    if (!caller.known && page) this.anonymousPages.check(page);
    state.tenant = caller.tenant;
    const routed = this.router.route(caller);
    if (isPromiseLike(routed)) return Promise.resolve(routed).then((decision) => admit(state, decision));
    return admit(state, routed);
  }
}

/** Records the call's pool, or refuses a tenant contained under a hard posture. */
function admit(state: CallState, decision: ContainmentDecision): true {
  if (decision.deny) throw new ResilienceError('contained', 'this tenant is contained: no calls are allowed');
  state.pool = decision.pool;
  state.contained = decision.contained;
  return true;
}
