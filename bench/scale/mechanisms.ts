/**
 * The steps of a call that know its tenant, built from dist/ as the service builds them, for N
 * tenants on the memory stores: the API-key check, the containment read, the rate limit, the
 * budget's reserve and settle, the lane (its fair queue across tenants) and the tool's breaker
 * (tenant-aware). The scale benchmark's in-process part drives them (bench/scale/admission.ts).
 */
import type { Caller } from '../../src/auth';
import type { BudgetReservation } from '../../src/budget';
import { built } from '../support/built';
import { type Tenants, tenantsConfig, TOOL, TOOL_LANE } from './tenants';

const { ApiKeyAuthenticator } = built<typeof import('../../src/auth')>('auth');
const { ContainmentRouter, MemoryContainmentStore } = built<typeof import('../../src/containment')>('containment');
const { MemoryRateLimitStore, RateLimiter } = built<typeof import('../../src/rate-limit')>('rate-limit');
const { BudgetGate, MemoryBudgetStore } = built<typeof import('../../src/budget')>('budget');
const { Lane } = built<typeof import('../../src/bulkhead')>('bulkhead');
const { Breaker, DEFAULT_BREAKER_SETTINGS } = built<typeof import('../../src/circuit-breaker')>('circuit-breaker');
const { SystemClock } = built<typeof import('../../src/common')>('common');
const { validateConfig } = built<typeof import('../../src/config')>('config');

/** The lane's limit, and how many calls arrive at once: 92 of each burst wait in its fair queue. */
export const LANE_CONCURRENCY = 8;
export const BURST = 100;
const COST_USD = 0.000001;
/** How long a reservation holds: a call's worst case, as the pipeline works it out. */
const RESERVATION_TTL_MS = 40_000;

const DONE = Promise.resolve(1);

/** One call's step: answers a promise when the step waits for something, else nothing. */
export type Step = (n: number) => Promise<unknown> | undefined;

export const STEPS = ['api key', 'containment', 'rate limit', 'budget', 'lane', 'breaker'] as const;
export type StepName = (typeof STEPS)[number];

export interface TenantSet {
  readonly tenants: number;
  /** Every step of the n-th call (of tenant n mod N), in the pipeline's order. */
  readonly call: Step;
  /** Each step alone, on the n-th call's tenant. */
  readonly steps: Readonly<Record<StepName, Step>>;
}

/** The mechanisms for `tenants`, each with a key, a rate limit and a budget of its own. */
export async function tenantSet(tenants: Tenants): Promise<TenantSet> {
  const { count } = tenants;
  const parsed = validateConfig(tenantsConfig(tenants, { kind: 'memory' }));
  if (!parsed.ok) throw new Error(`invalid config:\n${parsed.problems.join('\n')}`);
  const { config } = parsed;
  const clock = new SystemClock();

  const authenticator = new ApiKeyAuthenticator({ apiKeys: config.auth.apiKeys, allowAnonymous: false });
  const names = config.auth.apiKeys.map((key) => key.tenant);
  const router = new ContainmentRouter(
    new MemoryContainmentStore(),
    { containment: config.containment, tenants: names },
    clock,
  );
  await router.onModuleInit();
  const limiter = new RateLimiter(new MemoryRateLimitStore(clock), { rateLimits: config.rateLimits });
  const gate = new BudgetGate(new MemoryBudgetStore(clock), { budgets: config.budgets }, clock);
  const lane = new Lane({ name: TOOL_LANE, clock, concurrency: LANE_CONCURRENCY, queueCapacity: BURST });
  const breaker = new Breaker(TOOL, DEFAULT_BREAKER_SETTINGS, clock);

  const authorization = (n: number) => tenants.headers(n).authorization!;
  const callers: Caller[] = [];
  for (let n = 0; n < count; n++) callers.push(authenticator.authenticate(authorization(n)));
  const caller = (n: number) => callers[n % count]!;

  const inLane = (tenant: string, task: () => Promise<unknown>): Promise<unknown> => {
    const running = lane.run(task, { tenant });
    if (typeof running === 'string') throw new Error(`lane refused a call: ${running}`);
    return running;
  };
  const reserve = (tenant: string): BudgetReservation => {
    const reservation = gate.reserve(tenant, COST_USD, RESERVATION_TTL_MS);
    if (!reservation || 'then' in reservation) throw new Error('the memory budget store answered later');
    return reservation;
  };
  const fire = (tenant: string) => breaker.fire(() => DONE, tenant);

  const steps: Record<StepName, Step> = {
    'api key': (n) => void authenticator.authenticate(authorization(n)),
    containment: (n) => void router.route(caller(n)),
    'rate limit': (n) => void limiter.admit(caller(n).tenant, 1),
    budget: (n) => gate.settle(reserve(caller(n).tenant), COST_USD),
    lane: (n) => inLane(caller(n).tenant, () => DONE),
    breaker: (n) => fire(caller(n).tenant),
  };
  const call: Step = (n) => {
    const { tenant } = authenticator.authenticate(authorization(n));
    router.route(caller(n));
    limiter.admit(tenant, 1);
    const reservation = reserve(tenant);
    return inLane(tenant, () => fire(tenant)).then(() => gate.settle(reservation, COST_USD));
  };
  return { tenants: count, call, steps };
}

/**
 * `calls` calls of `step`, in bursts of {@link BURST} arriving at once (each burst awaited
 * before the next), numbered on from `from`: successive calls come from successive tenants.
 */
export async function inBursts(step: Step, from: number, calls: number): Promise<void> {
  const waiting: Array<Promise<unknown>> = [];
  for (let n = from; n < from + calls; n++) {
    const pending = step(n);
    if (pending) waiting.push(pending);
    if (waiting.length === BURST) await Promise.all(waiting.splice(0));
  }
  if (waiting.length > 0) await Promise.all(waiting);
}
