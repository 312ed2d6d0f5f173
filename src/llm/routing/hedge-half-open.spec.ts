import { MemoryBudgetStore } from '../../budget';
import type { Breaker } from '../../circuit-breaker';
import { LazyAbortController, ResilienceError, seededRandom } from '../../common';
import { FakeClock } from '../../common/fake-clock';
import type { FakeStepConfig } from '../llm.options';
import { MemoryRateLimitStore, RateLimiter } from '../../rate-limit';
import { track } from '../../../test/support/deferred';
import { advanceClocks } from '../../../test/support/fake-timers';
import { CALM, testRoute, testTarget, routingInVirtualTime, specPool } from '../../../test/support/llm-routes';
import {
  dailyBudgetGate,
  fakePrices,
  OUTPUT_TOKENS as OUTPUT_CAP,
  admittedAccount,
} from '../../../test/support/llm-accounting';
import type { ChatRequest } from '../chat.types';
import type { FailoverProgress } from './attempt-race';
import { serveWithFailover } from './failover';
import type { LlmRoute } from './llm-route';

// A hedge that wins against a half-open target's probe cancels the probe with `stopped`: that
// is neither the target's success nor its failure, so its breaker stays half open. Virtual time
// as in attempt-race.spec.ts: the route and the fake providers on one FakeClock, opossum's
// open → half-open timer on jest's fake timers (advanceClocks moves both).

const HEDGE_AFTER_MS = 300;
const { SMALL, LARGE } = fakePrices();
const REQUEST: ChatRequest = { model: 'chat', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 500 };

const routing = routingInVirtualTime();
let clock: FakeClock;
let breakers: Breaker[];
let serveOne: (subject: LlmRoute, tenant: string | undefined) => ReturnType<typeof track>;
const pool = specPool(4);

beforeEach(() => {
  ({ clock, breakers } = routing);
  const gate = dailyBudgetGate(new MemoryBudgetStore(clock), clock);
  const limiter = new RateLimiter(new MemoryRateLimitStore(clock), {
    rateLimits: { tenants: { acme: { tpm: 60_000 } }, failMode: 'closed', enforce: true },
  });
  serveOne = (subject, tenant) => {
    const progress: FailoverProgress = { attempts: 0, failovers: 0, tried: [], hedges: [], choices: [] };
    const account = admittedAccount('acme', gate, limiter, clock);
    const call = {
      route: subject,
      request: REQUEST,
      pool,
      abort: new LazyAbortController(),
      account,
      progress,
      tenant,
    };
    return track(serveWithFailover(clock, seededRandom(42), call));
  };
});

const answer = (text: string): FakeStepConfig => ({ text, usage: { promptTokens: 800, completionTokens: 100 } });

describe.each([
  ['an anonymous request', undefined],
  ['a tenant’s request', 'acme'],
])('a hedge that wins against a half-open target’s probe (%s)', (_who, tenant) => {
  it('leaves the slow target’s breaker half open, and its next request probes it', async () => {
    const slowTarget = testTarget(
      clock,
      breakers,
      'small',
      [{ ...answer('too late'), delayMs: 5_000 }, answer('the probe answered')],
      { price: SMALL, breaker: { volumeThreshold: 1 } },
    );
    const fastTarget = testTarget(clock, breakers, 'large', [answer('from the hedge')], { price: LARGE });
    const subject = testRoute([slowTarget, fastTarget], OUTPUT_CAP, { hedgeAfterMs: HEDGE_AFTER_MS, maxAttempts: 1 });
    await slowTarget.breaker
      .fire(() => Promise.reject(new ResilienceError('transient', 'upstream answered 503')))
      .catch(() => undefined);
    advanceClocks(clock, CALM.resetTimeoutMs);
    const halfOpen = slowTarget.breaker.snapshot();
    expect(halfOpen.state).toBe('half_open');

    const hedged = serveOne(subject, tenant);
    await clock.advanceAsync(HEDGE_AFTER_MS);

    expect(hedged.state).toBe('fulfilled');
    expect(hedged.value).toMatchObject({ target: fastTarget, hedged: true });
    expect(slowTarget.provider.calls[0].signal.reason).toMatchObject({ kind: 'stopped' });
    expect(slowTarget.breaker.snapshot()).toEqual(halfOpen);
    expect(slowTarget.breaker.refusal(tenant)).toBeUndefined();

    const next = serveOne(subject, tenant);
    await clock.advanceAsync(0);

    expect(slowTarget.provider.calls).toHaveLength(2);
    expect(next.value).toMatchObject({ target: slowTarget, hedged: false });
    expect(slowTarget.breaker.snapshot()).toMatchObject({ state: 'closed', failures: 0, successes: 0 });
  });
});
