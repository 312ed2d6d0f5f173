import fc from 'fast-check';
import { reserveResult } from '../../src/budget/redis-budget.store';
import { claimOf } from '../../src/idempotency/redis-idempotency.store';
import { storedOutcomeOf } from '../../src/idempotency/stored-outcomes';
import { takeDecision, takeReplyLength } from '../../src/rate-limit/redis-rate-limit.store';
import { RedisReplyError, replyFlag, replyIntegerAt, replyIntegers } from '../../src/store/redis-reply';

/**
 * Every reader of a Redis reply, fed what a proxy, a script of another version or a key another
 * program wrote could send: it answers a decision made only of finite, non-negative safe
 * integers, or rejects with RedisReplyError; nothing else ever escapes it.
 */

const RUNS = 2_000;
const RULES = [
  { name: 'rpm', perMinute: 600 },
  { name: 'tpm', perMinute: 100_000 },
];

/** What ioredis hands over for a reply (integers, strings, null, arrays of them) and what a wrong client might. */
const replyValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  scalar: fc.oneof(
    fc.integer({ min: -3, max: 3 }),
    fc.constantFrom(1e20, -1e20, 2 ** 53, Number.MAX_SAFE_INTEGER, NaN, Infinity, -Infinity, 0.5, -0),
    fc.double(),
    fc.string(),
    fc.constantFrom('1', '0', 'claimed', 'completed', 'in_flight', 'conflict', '__proto__'),
    fc.constant(null),
    fc.constant(undefined),
    fc.boolean(),
    fc.bigInt(),
  ),
  reply: fc.oneof({ depthSize: 'small' }, tie('scalar'), fc.array(tie('reply'), { maxLength: 10 })),
})).reply;

/** Replies of the right length, whose entries are near what the scripts answer: the readers' checks, not the length, decide. */
const nearlyIntegers = (length: number) =>
  fc.array(fc.oneof(fc.integer({ min: -2, max: 5 }), fc.constantFrom(1e20, 2 ** 53, 0.5, NaN, '1', null)), {
    minLength: length,
    maxLength: length + 3,
  });

function isCount(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

/** Runs `read`; passes when it answered (then `check` holds) or threw RedisReplyError. */
function answersOrRejectsTyped<T>(read: () => T, check: (answer: T) => void): void {
  let answer: T;
  try {
    answer = read();
  } catch (error) {
    expect(error).toBeInstanceOf(RedisReplyError);
    return;
  }
  check(answer);
}

describe('readers of Redis replies (property)', () => {
  it('replyFlag answers a boolean only for 0 or 1', () => {
    fc.assert(
      fc.property(replyValue, (reply) =>
        answersOrRejectsTyped(
          () => replyFlag(reply, 'x'),
          (flag) => expect(flag).toBe(reply === 1),
        ),
      ),
      { numRuns: RUNS },
    );
  });

  it('replyIntegers and replyIntegerAt answer only safe integers at or above the minimum', () => {
    fc.assert(
      fc.property(fc.oneof(replyValue, nearlyIntegers(3)), fc.integer({ min: 0, max: 1 }), (reply, min) => {
        answersOrRejectsTyped(
          () => replyIntegers(reply, 3, 'x', min),
          (integers) => {
            expect(integers).toHaveLength(3);
            for (const value of integers) expect(Number.isSafeInteger(value) && value >= min).toBe(true);
          },
        );
        answersOrRejectsTyped(
          () => replyIntegerAt(reply, 1, 'x', min),
          (value) => expect(Number.isSafeInteger(value) && value >= min).toBe(true),
        );
      }),
      { numRuns: RUNS },
    );
  });

  it('a budget reservation reply is a whole decision of counts, or the typed error', () => {
    fc.assert(
      fc.property(fc.oneof(replyValue, nearlyIntegers(5)), fc.integer({ min: 0, max: 2 }), (reply, from) =>
        answersOrRejectsTyped(
          () => reserveResult(reply, from),
          (result) => {
            expect(isCount(result.spentMicros) && isCount(result.reservedMicros)).toBe(true);
            if (!result.ok && result.cause === 'held') {
              expect(isCount(result.nextLapseInMs) && result.nextLapseInMs >= 1).toBe(true);
            }
          },
        ),
      ),
      { numRuns: RUNS },
    );
  });

  it('a rate-limit take reply is a whole decision of counts, or the typed error', () => {
    fc.assert(
      fc.property(fc.oneof(replyValue, nearlyIntegers(takeReplyLength(RULES))), (reply) =>
        answersOrRejectsTyped(
          () => takeDecision(reply, RULES),
          (decision) => {
            expect(typeof decision.allowed).toBe('boolean');
            expect(isCount(decision.retryAfterMs)).toBe(true);
            expect(decision.buckets).toHaveLength(RULES.length);
            for (const bucket of decision.buckets)
              expect(isCount(bucket.remaining) && isCount(bucket.resetMs)).toBe(true);
          },
        ),
      ),
      { numRuns: RUNS },
    );
  });

  it('an idempotency claim reply is a claim of this version, or the typed error', () => {
    const storedJson = fc.oneof(
      fc.json(),
      fc.string(),
      fc.constant('{"ok":false,"kind":"transient","message":"m","attempts":1}'),
    );
    const claimLike = fc.tuple(fc.constantFrom('claimed', 'completed', 'in_flight', 'conflict', 'other'), storedJson);
    fc.assert(
      fc.property(fc.oneof(replyValue, claimLike), (reply) =>
        answersOrRejectsTyped(
          () => claimOf(reply),
          (claim) => {
            if (claim.status === 'claimed') expect(typeof claim.token).toBe('string');
            if (claim.status === 'completed') expect(isCount(claim.outcome.attempts)).toBe(true);
          },
        ),
      ),
      { numRuns: RUNS },
    );
  });

  it('a stored outcome is read only in the shape this version writes', () => {
    fc.assert(
      fc.property(fc.oneof(fc.json(), fc.string()), (json) => {
        const outcome = storedOutcomeOf(json);
        if (outcome === undefined) return;
        expect(isCount(outcome.attempts)).toBe(true);
        if (!outcome.ok) expect(typeof outcome.message).toBe('string');
      }),
      { numRuns: RUNS },
    );
    expect(storedOutcomeOf('{"ok":true,"result":{"a":1},"attempts":1,"pool":"normal"}')).toEqual({
      ok: true,
      result: { a: 1 },
      attempts: 1,
      pool: 'normal',
    });
    expect(storedOutcomeOf('{"ok":false,"kind":"nope","message":"m","attempts":1}')).toBeUndefined();
  });
});
