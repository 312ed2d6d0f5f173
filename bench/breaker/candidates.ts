/**
 * What the breaker benchmark compares: one call through each breaker, awaited, of an action
 * that returns an already settled promise, so what is measured is the breaker's own work.
 */
import type { CircuitSnapshot } from '../../src/circuit-breaker/breaker';
import type { BreakerSettings } from '../../src/circuit-breaker/breaker-settings';
import { built } from '../support/built';
import { frozen } from './load';

const { Breaker } = built<typeof import('../../src/circuit-breaker/breaker')>('circuit-breaker/breaker');
const { ResilienceError, SystemClock } = built<typeof import('../../src/common')>('common');
const handWritten = frozen<typeof import('./frozen/hand-written-breaker')>('hand-written-breaker');
const opossumBefore = frozen<typeof import('./frozen/opossum-breaker-before-afb70a5')>(
  'opossum-breaker-before-afb70a5',
);

/**
 * More than 100 % of the attempts can never fail, so no breaker ever opens: every call of a
 * mode takes the same path, through the window and the decision to open.
 */
export const SETTINGS: BreakerSettings = {
  errorThresholdPercentage: 100,
  volumeThreshold: 10,
  resetTimeoutMs: 30_000,
  rollingCountTimeoutMs: 10_000,
};

/** Calls per tinybench iteration, so that its per-iteration timing costs next to nothing. */
export const CALLS_PER_ITERATION = 1_000;

/** `successes`: the action resolves; `failures`: it rejects with a failure that counts. */
export type Mode = 'successes' | 'failures';
export const MODES: readonly Mode[] = ['successes', 'failures'];

type Action = () => Promise<number>;

/** What each candidate offers: the Breaker's `fire`, and for the breakers their snapshot. */
export interface Guard {
  fire(action: Action): Promise<number>;
  snapshot?(): CircuitSnapshot;
  shutdown?(): void;
}

export interface Candidate {
  name: string;
  make(): Guard;
}

export const DIRECT = 'direct call';
export const BASELINE = 'hand-written';
export const OPOSSUM = 'opossum Breaker';
export const OPOSSUM_BEFORE = 'opossum before afb70a5';
export const OPOSSUM_TENANT = 'opossum Breaker, with a tenant';

/** The Breaker of dist/ fired as tools and LLM targets fire it: with the caller's tenant, so it can tell one tenant's failures from the dependency's. */
function withTenant(): Guard {
  const breaker = new Breaker('bench', SETTINGS, new SystemClock());
  return {
    fire: (action) => breaker.fire(action, 'acme'),
    snapshot: () => breaker.snapshot(),
    shutdown: () => breaker.shutdown(),
  };
}

export const CANDIDATES: Candidate[] = [
  { name: DIRECT, make: () => ({ fire: (action) => action() }) },
  { name: BASELINE, make: () => new handWritten.Breaker('bench', SETTINGS, new SystemClock()) },
  { name: OPOSSUM, make: () => new Breaker('bench', SETTINGS, new SystemClock()) },
  { name: OPOSSUM_BEFORE, make: () => new opossumBefore.Breaker('bench', SETTINGS, new SystemClock()) },
  { name: OPOSSUM_TENANT, make: withTenant },
];

const SUCCEEDED = Promise.resolve(1);
const FAILED = Promise.reject(new ResilienceError('transient', 'upstream answered 503'));
FAILED.catch(() => undefined);
const succeed: Action = () => SUCCEEDED;
const fail: Action = () => FAILED;

/** `count` calls through `guard`, one after the other. */
export async function calls(guard: Guard, mode: Mode, count: number): Promise<void> {
  if (mode === 'successes') {
    for (let i = 0; i < count; i++) await guard.fire(succeed);
    return;
  }
  for (let i = 0; i < count; i++) {
    try {
      await guard.fire(fail);
    } catch {
      // Expected: the failure is what this mode measures.
    }
  }
}

/**
 * Fails unless the breaker counted both kinds of outcome and stayed closed: a breaker that
 * ignored failures, or opened and refused, would be measured on another path.
 */
export async function checkCounts(candidate: Candidate): Promise<void> {
  const guard = candidate.make();
  if (!guard.snapshot) return;
  await calls(guard, 'failures', 20);
  await calls(guard, 'successes', 5);
  const snapshot = guard.snapshot();
  guard.shutdown?.();
  if (snapshot.state !== 'closed' || snapshot.failures !== 20 || snapshot.successes !== 5) {
    throw new Error(`${candidate.name}: counted ${JSON.stringify(snapshot)}, expected 20 failures and 5 successes`);
  }
}
