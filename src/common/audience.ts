/**
 * Who reads shared state (a breaker, an event of no tenant): the caller's tenant, and whether
 * its request was routed as contained (`containment: deny` tools refuse it then).
 */
export interface Viewer {
  readonly tenant: string;
  readonly contained: boolean;
}

/**
 * Whether a viewer may see a piece of shared state: those who may use what it is about. A
 * breaker of a route kept for some tenants shows that route's traffic, which is theirs alone;
 * to anyone else the route does not exist (`GET /v1/models`), so neither may its breaker.
 */
export type Audience = (viewer: Viewer) => boolean;

/** Every tenant, anonymous included: a tool, a route without `tenants`, a `@CircuitBreaker` route. */
export const EVERYONE: Audience = () => true;

/** Tenants not contained: those a `containment: deny` tool serves. */
export const UNCONTAINED: Audience = (viewer) => !viewer.contained;

/** The tenants listed; every tenant when there is no list (a route without `tenants`). */
export function tenantsOf(tenants: readonly string[] | undefined): Audience {
  if (tenants === undefined) return EVERYONE;
  const listed = new Set(tenants);
  return (viewer) => listed.has(viewer.tenant);
}

/** Those either audience admits: a breaker registered twice is seen by whoever may use either. */
export function eitherOf(first: Audience, second: Audience): Audience {
  if (first === EVERYONE || second === EVERYONE) return EVERYONE;
  return (viewer) => first(viewer) || second(viewer);
}
