import { RedisBudgetStore } from '../../budget';
import type { ResilienceError } from '../../common';
import { FakeClock } from '../../common/fake-clock';
import { BudgetGate } from '../../budget/budget-gate.service';
import { RateLimiter, RedisRateLimitStore } from '../../rate-limit';
import { createRedisConnection } from '../../store/redis-connection';
import { RedisTime } from '../../store/redis-keys';
import { hashTag, keysUnder, RedisTestRun, SHARED_REDIS_URL, silentLogger } from '../../../test/support/redis';
import { describeRedis } from '../../../test/support/redis-availability';
import { CallAdmission } from './call-admission';
import { describeCallAdmission } from './call-admission.contract';
import { RedisCallAdmission } from './redis-call-admission';

const TIMES = { firstHoldMs: 40_000, retryHoldMs: 10_000, retryAfterMaxMs: 5_000 };

describeRedis('RedisCallAdmission', () => {
  const run = RedisTestRun.setUp();

  function storesOn(clock: FakeClock, redis = run.redis, keys = run.keys()) {
    const time = new RedisTime(clock);
    const rates = new RedisRateLimitStore(redis, keys, time);
    const budgets = new RedisBudgetStore(redis, keys, time);
    return { rates, budgets, joint: new RedisCallAdmission(redis, rates, budgets) };
  }

  describeCallAdmission('Redis stores (one script)', (clock) => storesOn(clock));

  function admissionOn(stores: ReturnType<typeof storesOn>, clock: FakeClock, failMode: 'open' | 'closed' = 'open') {
    const gate = new BudgetGate(stores.budgets, { budgets: { period: 'day', tenants: { acme: 3 } } }, clock);
    const limiter = new RateLimiter(stores.rates, {
      rateLimits: { default: { rpm: 5 }, tenants: {}, failMode, enforce: true },
    });
    return { admission: new CallAdmission(limiter, gate, stores.joint), limiter };
  }

  const call = { tenant: 'acme', tokens: 1, costUsd: 1 };

  it('decides a call with one command to Redis, on keys of one hash tag', async () => {
    const clock = new FakeClock();
    const keys = run.keys();
    const stores = storesOn(clock, run.redis, keys);
    const { admission } = admissionOn(stores, clock);
    const sent = jest.spyOn(run.redis, 'sendCommand');

    await admission.admit(call, TIMES);

    expect(sent.mock.calls.map(([command]) => command.name)).toEqual(['evalsha']);
    sent.mockRestore();
    const written = await keysUnder(run.redis, keys.prefix);
    expect(written.length).toBe(4);
    expect(new Set(written.map(hashTag))).toEqual(new Set(['acme']));
  });

  describe('with Redis unreachable', () => {
    async function refusal(failMode: 'open' | 'closed') {
      const redis = createRedisConnection({ url: SHARED_REDIS_URL, commandTimeoutMs: 500, logger: silentLogger });
      redis.disconnect();
      const clock = new FakeClock();
      const { admission, limiter } = admissionOn(storesOn(clock, redis), clock, failMode);
      try {
        await admission.admit(call, TIMES);
      } catch (error) {
        return { error: error as ResilienceError, failedOpen: limiter.counts.failedOpen };
      }
      throw new Error('expected a refusal');
    }

    it('refuses unavailable for the rate limit when it fails closed', async () => {
      const { error, failedOpen } = await refusal('closed');

      expect(error).toMatchObject({ kind: 'unavailable', message: 'the rate limit store is unavailable' });
      expect(failedOpen).toBe(0);
    });

    it('refuses unavailable for the budget, which fails closed, when the rate limit fails open', async () => {
      const { error, failedOpen } = await refusal('open');

      expect(error).toMatchObject({ kind: 'unavailable', message: 'the budget store is unavailable' });
      expect(failedOpen).toBe(1);
    });
  });
});
