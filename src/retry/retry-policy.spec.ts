import { ERROR_KINDS, type ErrorKind, ResilienceError, seededRandom } from '../common';
import { FakeClock } from '../common/fake-clock';
import { RetryBudget } from './retry-budget';
import type { RetryContext } from './retry-context';
import { RetryPolicy, type RetrySettings } from './retry-policy';

function policy(overrides: Partial<RetrySettings> = {}): RetryPolicy {
  return new RetryPolicy({ maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 2_000, deadlineMs: 10_000, ...overrides });
}

/** The largest number a Random may return: the draw at the very top of [0, 1). */
const ALMOST_ONE = () => 1 - Number.EPSILON / 2;
const ZERO = () => 0;

/** Which kinds the contract retries (docs/http-contract.md section 6), written out so the code cannot grade itself. */
const RETRY_RULES: Array<[ErrorKind, 'always' | 'idempotent_only' | 'never']> = [
  ['invalid_request', 'never'],
  ['schema', 'never'],
  ['unauthorized', 'never'],
  ['budget_exceeded', 'never'],
  ['contained', 'never'],
  ['egress_denied', 'never'],
  ['not_found', 'never'],
  ['tool_changed', 'never'],
  ['idempotency_conflict', 'never'],
  ['rate_limited', 'never'],
  ['queue_full', 'never'],
  ['queue_expired', 'never'],
  ['circuit_open', 'never'],
  ['stopped', 'never'],
  ['unavailable', 'never'],
  ['overloaded', 'never'],
  ['timeout', 'idempotent_only'],
  ['transient', 'always'],
  ['internal', 'never'],
];

describe('RetryPolicy', () => {
  describe('backoff', () => {
    it.each([1, 2, 3, 4, 5, 6, 7, 8, 20])(
      'draws every wait before retry %i from [0, min(maxDelayMs, baseDelayMs × 2^(n − 1)))',
      (retry) => {
        const retries = policy({ baseDelayMs: 100, maxDelayMs: 2_000 });
        const random = seededRandom(retry * 7919);
        const ceiling = Math.min(2_000, 100 * 2 ** (retry - 1));
        const draws = Array.from({ length: 2_000 }, () => retries.backoffMs(retry, random));

        for (const draw of draws) {
          expect(Number.isInteger(draw)).toBe(true);
          expect(draw).toBeGreaterThanOrEqual(0);
          expect(draw).toBeLessThan(ceiling);
        }
        // Full jitter: the draws cover the whole range, not just its upper half.
        expect(Math.min(...draws)).toBeLessThan(ceiling * 0.05);
        expect(Math.max(...draws)).toBeGreaterThan(ceiling * 0.95);
      },
    );

    it('repeats the same waits for the same seed', () => {
      const retries = policy();
      const first = seededRandom(42);
      const second = seededRandom(42);
      const waits = (random: () => number) => [1, 2, 3, 4, 5].map((retry) => retries.backoffMs(retry, random));

      expect(waits(first)).toEqual(waits(second));
    });

    it('doubles the ceiling with every retry', () => {
      const retries = policy({ baseDelayMs: 50, maxDelayMs: 100_000 });

      expect([1, 2, 3, 4, 5, 6].map((retry) => retries.backoffMs(retry, ALMOST_ONE))).toEqual([
        49, 99, 199, 399, 799, 1599,
      ]);
    });

    it('never waits more than maxDelayMs, however many retries came before', () => {
      const retries = policy({ baseDelayMs: 100, maxDelayMs: 2_000 });

      expect([5, 6, 7, 10, 53, 54, 1_000, 1_000_000].map((retry) => retries.backoffMs(retry, ALMOST_ONE))).toEqual([
        1599, 1999, 1999, 1999, 1999, 1999, 1999, 1999,
      ]);
    });

    it('may retry at once: the lowest draw is 0', () => {
      expect(policy().backoffMs(3, ZERO)).toBe(0);
    });

    it('never waits when baseDelayMs is 0', () => {
      const retries = policy({ baseDelayMs: 0, maxDelayMs: 0 });

      expect([1, 2, 3].map((retry) => retries.backoffMs(retry, ALMOST_ONE))).toEqual([0, 0, 0]);
    });
  });

  describe('Retry-After', () => {
    it('waits at least an upstream Retry-After that is longer than the draw', () => {
      const random = seededRandom(3);
      const retries = policy({ baseDelayMs: 100, maxDelayMs: 2_000 });

      for (let i = 0; i < 200; i++) expect(retries.backoffMs(1, random, 1_500)).toBe(1_500);
    });

    it('waits as long as a Retry-After asks even when it is more than maxDelayMs', () => {
      expect(policy({ maxDelayMs: 2_000 }).backoffMs(1, ALMOST_ONE, 30_000)).toBe(30_000);
    });

    it('keeps the drawn wait when it is longer than the Retry-After', () => {
      const retries = policy({ baseDelayMs: 1_000, maxDelayMs: 2_000 });

      expect(retries.backoffMs(1, () => 0.5, 100)).toBe(500);
    });

    it('treats a Retry-After of 0 as no minimum', () => {
      const retries = policy({ baseDelayMs: 1_000, maxDelayMs: 2_000 });

      expect(retries.backoffMs(1, ZERO, 0)).toBe(0);
      expect(retries.backoffMs(1, () => 0.25, 0)).toBe(250);
    });
  });

  describe('which failures are retried', () => {
    it('knows a rule for exactly the kinds of the contract', () => {
      expect(RETRY_RULES.map(([kind]) => kind).sort()).toEqual(Object.keys(ERROR_KINDS).sort());
    });

    it.each(RETRY_RULES)('retries %s: %s', (kind, rule) => {
      const retries = policy();

      expect(retries.retries(kind, true)).toBe(rule !== 'never');
      expect(retries.retries(kind, false)).toBe(rule === 'always');
    });

    it.each<ErrorKind>(['transient', 'timeout'])(
      'never retries a %s failure that says it is not retryable, idempotent or not',
      (kind) => {
        const retries = policy();
        const failure = new ResilienceError(kind, 'the upstream tool said no', { retryable: false });

        expect(retries.retries(failure.kind, true, failure.retryable)).toBe(false);
        expect(retries.retries(failure.kind, false, failure.retryable)).toBe(false);
      },
    );

    it('keeps a failure not retryable when it is given its attempts', () => {
      const counted = new ResilienceError('transient', 'the upstream tool said no', { retryable: false }).withAttempts(
        2,
      );

      expect(counted).toMatchObject({ attempts: 2, retryable: false });
      expect(policy().retries(counted.kind, true, counted.retryable)).toBe(false);
    });
  });

  describe('settings', () => {
    it('keeps the settings it was given', () => {
      const retries = policy({ maxAttempts: 4, baseDelayMs: 25, maxDelayMs: 400, deadlineMs: 5_000 });

      expect(retries).toMatchObject({ maxAttempts: 4, baseDelayMs: 25, maxDelayMs: 400, deadlineMs: 5_000 });
    });

    it('accepts a single attempt with no backoff', () => {
      expect(() => policy({ maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0, deadlineMs: 1 })).not.toThrow();
    });

    it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53])('refuses maxAttempts %p', (maxAttempts) => {
      expect(() => policy({ maxAttempts })).toThrow(RangeError);
    });

    it.each([-1, Number.NaN, Number.POSITIVE_INFINITY])('refuses baseDelayMs %p', (baseDelayMs) => {
      expect(() => policy({ baseDelayMs, maxDelayMs: 2_000 })).toThrow(RangeError);
    });

    it.each([99, -1, Number.NaN, Number.POSITIVE_INFINITY])(
      'refuses maxDelayMs %p with baseDelayMs 100',
      (maxDelayMs) => {
        expect(() => policy({ baseDelayMs: 100, maxDelayMs })).toThrow(RangeError);
      },
    );

    it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY])('refuses deadlineMs %p', (deadlineMs) => {
      expect(() => policy({ deadlineMs })).toThrow(RangeError);
    });
  });

  describe('decide: the one decision of both loops', () => {
    const transient = new ResilienceError('transient', 'upstream answered 503');
    function context(overrides: Partial<RetryContext> = {}): RetryContext {
      return {
        attempts: 1,
        idempotent: false,
        deadlineAt: 10_000,
        attemptMs: 1_000,
        clock: new FakeClock(),
        random: () => 0.5,
        budget: undefined,
        breakerRefusal: () => undefined,
        ...overrides,
      };
    }

    it('answers the backoff for a failure the table retries', () => {
      expect(policy({ baseDelayMs: 100 }).decide(transient, context())).toBe(50);
    });

    it('retries a timeout only for idempotent work, as the error table says', () => {
      const timeout = new ResilienceError('timeout', 'too slow');
      expect(policy().decide(timeout, context({ idempotent: false }))).toBeUndefined();
      expect(policy().decide(timeout, context({ idempotent: true }))).toBe(50);
    });

    it('makes no retry when no attempt ran or none is left', () => {
      expect(policy({ maxAttempts: 3 }).decide(transient, context({ attempts: 0 }))).toBeUndefined();
      expect(policy({ maxAttempts: 3 }).decide(transient, context({ attempts: 3 }))).toBeUndefined();
    });

    it('starts no retry whose wait and attempt do not fit before the deadline, nor one at the deadline', () => {
      const clock = new FakeClock();
      clock.advance(8_950);
      // 8 950 + 50 + 1 000 = 10 000: fits exactly.
      expect(policy().decide(transient, context({ clock }))).toBe(50);
      clock.advance(1);
      expect(policy().decide(transient, context({ clock }))).toBeUndefined();
      clock.advance(998);
      // No attempt time asked for: a wait ending before the deadline fits, one ending at it does not.
      expect(policy().decide(transient, context({ clock, attemptMs: 0 }))).toBe(50);
      clock.advance(1);
      expect(policy().decide(transient, context({ clock, attemptMs: 0 }))).toBeUndefined();
    });

    it("answers the breaker's refusal when the circuit opened meanwhile", () => {
      const open = new ResilienceError('circuit_open', 'open');
      expect(policy().decide(transient, context({ breakerRefusal: () => open }))).toBe(open);
    });

    it('spends the retry budget last, only on a retry that will happen', () => {
      const clock = new FakeClock();
      const budget = new RetryBudget({ percent: 0, minRetries: 1, windowMs: 10_000 }, clock);
      const open = new ResilienceError('circuit_open', 'open');
      expect(policy().decide(transient, context({ clock, budget, breakerRefusal: () => open }))).toBe(open);
      expect(budget.window().retries).toBe(0);
      expect(policy().decide(transient, context({ clock, budget }))).toBe(50);
      expect(policy().decide(transient, context({ clock, budget }))).toBeUndefined();
    });
  });
});
