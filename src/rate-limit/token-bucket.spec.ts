import fc from 'fast-check';
import type { BucketRule } from './rate-limit.store';
import {
  adjustTokens,
  assertAdjust,
  assertTake,
  bucketState,
  capacityUnits,
  fullAt,
  msToHold,
  msUntilFull,
  takeTokens,
  type TokenBucketState,
  UNITS_PER_TOKEN,
  unitsAt,
} from './token-bucket';

const U = UNITS_PER_TOKEN;
const RPM_60: BucketRule = { name: 'rpm', perMinute: 60 };
const TPM_1000: BucketRule = { name: 'tpm', perMinute: 1000 };

/** A bucket holding `tokens` at time `at`. */
const holding = (tokens: number, at = 0): TokenBucketState => ({ units: tokens * U, updatedAt: at });

describe('unitsAt', () => {
  it('answers a full bucket for a bucket with no state', () => {
    expect(unitsAt(undefined, 60, 123)).toBe(60 * U);
  });

  it('refills perMinute units per millisecond, keeping fractions of a token', () => {
    expect(unitsAt(holding(0), 60, 1)).toBe(60);
    expect(unitsAt(holding(0), 60, 500) / U).toBe(0.5);
    expect(unitsAt(holding(0), 7, 1_000) / U).toBeCloseTo(7 / 60, 12);
  });

  it('refills no further than capacity', () => {
    expect(unitsAt(holding(59), 60, 5_000)).toBe(60 * U);
    expect(unitsAt(holding(0), 60, Number.MAX_SAFE_INTEGER)).toBe(60 * U);
  });

  it('refills a bucket in overage from below zero', () => {
    expect(unitsAt(holding(-30), 60, 10_000) / U).toBe(-20);
  });

  it('refills nothing for time before the last update (a clock that stepped back)', () => {
    expect(unitsAt(holding(10, 5_000), 60, 1_000)).toBe(10 * U);
  });

  it('caps a level above a lowered capacity', () => {
    expect(unitsAt(holding(60), 10, 0)).toBe(10 * U);
  });
});

describe('msToHold', () => {
  it('answers 0 when the amount fits now', () => {
    expect(msToHold(5 * U, 5, 60)).toBe(0);
    expect(msToHold(60 * U, 60, 60)).toBe(0);
  });

  it('answers 0 for an amount of 0, even in overage', () => {
    expect(msToHold(-100 * U, 0, 60)).toBe(0);
  });

  it('answers the time the missing part takes to refill, rounded up', () => {
    expect(msToHold(0, 1, 60)).toBe(1_000);
    expect(msToHold(0, 1, 7)).toBe(Math.ceil(60_000 / 7));
    expect(msToHold(0.5 * U, 1, 60)).toBe(500);
    expect(msToHold(-10 * U, 1, 60)).toBe(11_000);
  });

  it('answers 60 s × amount / perMinute for an amount above capacity, whatever the level', () => {
    expect(msToHold(60 * U, 90, 60)).toBe(90_000);
    expect(msToHold(-60 * U, 90, 60)).toBe(90_000);
    expect(msToHold(0, 61, 60)).toBeGreaterThan(msUntilFull(0, 60));
  });
});

describe('bucketState', () => {
  it('reports whole tokens, never below 0, and the ms until full rounded up', () => {
    expect(bucketState('rpm', 59.5 * U, 60)).toEqual({ name: 'rpm', remaining: 59, resetMs: 500 });
    expect(bucketState('rpm', -5 * U, 60)).toEqual({ name: 'rpm', remaining: 0, resetMs: 65_000 });
    expect(bucketState('rpm', 60 * U, 60)).toEqual({ name: 'rpm', remaining: 60, resetMs: 0 });
    expect(bucketState('rpm', 1, 7)).toEqual({ name: 'rpm', remaining: 0, resetMs: Math.ceil((7 * U - 1) / 7) });
  });
});

describe('fullAt', () => {
  it('answers when the bucket is full again', () => {
    expect(fullAt(holding(30, 1_000), 60)).toBe(31_000);
    expect(fullAt(holding(-60, 0), 60)).toBe(120_000);
    expect(fullAt(holding(60, 7), 60)).toBe(7);
  });
});

describe('takeTokens', () => {
  it('takes from every bucket when all fit, and reports them after the take', () => {
    const outcome = takeTokens([undefined, holding(500)], [RPM_60, TPM_1000], [1, 200], 0);

    expect(outcome.next).toEqual([holding(59), holding(300)]);
    expect(outcome.decision).toEqual({
      allowed: true,
      retryAfterMs: 0,
      buckets: [
        { name: 'rpm', remaining: 59, resetMs: 1_000 },
        { name: 'tpm', remaining: 300, resetMs: 42_000 },
      ],
    });
  });

  it('takes nothing when one bucket refuses, and answers the longest wait', () => {
    const outcome = takeTokens([holding(0), holding(100)], [RPM_60, TPM_1000], [1, 400], 0);

    expect(outcome.next).toBeUndefined();
    expect(outcome.decision).toEqual({
      allowed: false,
      retryAfterMs: 18_000,
      buckets: [
        { name: 'rpm', remaining: 0, resetMs: 60_000 },
        { name: 'tpm', remaining: 100, resetMs: 54_000 },
      ],
    });
  });

  it('refuses an amount above capacity from a full bucket', () => {
    const outcome = takeTokens([undefined], [RPM_60], [61], 0);

    expect(outcome.next).toBeUndefined();
    expect(outcome.decision.retryAfterMs).toBe(61_000);
  });

  it('never moves a bucket time back', () => {
    const outcome = takeTokens([holding(10, 5_000)], [RPM_60], [1], 1_000);

    expect(outcome.next).toEqual([holding(9, 5_000)]);
  });

  it('allows an empty rule list', () => {
    expect(takeTokens([], [], [], 0)).toEqual({
      decision: { allowed: true, retryAfterMs: 0, buckets: [] },
      next: [],
    });
  });
});

describe('adjustTokens', () => {
  it('adds back, capped at capacity', () => {
    expect(adjustTokens([holding(0), holding(990)], [RPM_60, TPM_1000], [30, 700], 0)).toEqual([
      holding(30),
      holding(1000),
    ]);
  });

  it('takes below zero for a negative amount, counting the refill first', () => {
    expect(adjustTokens([holding(0)], [TPM_1000], [-500], 6_000)).toEqual([holding(-400, 6_000)]);
  });

  it('starts a bucket with no state from full', () => {
    expect(adjustTokens([undefined], [TPM_1000], [-1_200], 42)).toEqual([holding(-200, 42)]);
  });
});

describe('assertTake and assertAdjust', () => {
  it('accept well-formed rules and amounts', () => {
    expect(() => assertTake([RPM_60, TPM_1000], [1, 0])).not.toThrow();
    expect(() => assertAdjust([RPM_60, TPM_1000], [-1, 2.5])).not.toThrow();
    expect(() => assertTake([{ name: 'a_B-9', perMinute: 0.5 }], [0.25])).not.toThrow();
  });

  it.each<[string, BucketRule[], number[]]>([
    ['fewer amounts than rules', [RPM_60, TPM_1000], [1]],
    ['more amounts than rules', [RPM_60], [1, 1]],
    ['a NaN amount', [RPM_60], [Number.NaN]],
    ['an infinite amount', [RPM_60], [Number.POSITIVE_INFINITY]],
    ['perMinute 0', [{ name: 'rpm', perMinute: 0 }], [1]],
    ['a negative perMinute', [{ name: 'rpm', perMinute: -1 }], [1]],
    ['a NaN perMinute', [{ name: 'rpm', perMinute: Number.NaN }], [1]],
    ['a bucket named twice', [RPM_60, RPM_60], [1, 1]],
    ['an empty name', [{ name: '', perMinute: 1 }], [1]],
    ['a name with a colon', [{ name: 'rpm:u', perMinute: 1 }], [1]],
    ['a name of 65 characters', [{ name: 'r'.repeat(65), perMinute: 1 }], [1]],
  ])('throw a RangeError for %s', (_label, rules, amounts) => {
    expect(() => assertTake(rules, amounts)).toThrow(RangeError);
    expect(() => assertAdjust(rules, amounts)).toThrow(RangeError);
  });

  it('assertTake throws a RangeError for a negative amount; assertAdjust accepts it', () => {
    expect(() => assertTake([RPM_60], [-1])).toThrow(RangeError);
    expect(() => assertAdjust([RPM_60], [-1])).not.toThrow();
  });
});

describe('properties', () => {
  /** The model: every asked amount is at most capacity and the bucket holds it (0 always fits). */
  const fits = (
    states: ReadonlyArray<TokenBucketState | undefined>,
    rules: readonly BucketRule[],
    amounts: readonly number[],
    now: number,
  ) =>
    rules.every(
      (rule, index) =>
        amounts[index] === 0 ||
        (amounts[index] <= rule.perMinute && unitsAt(states[index], rule.perMinute, now) >= amounts[index] * U),
    );

  const perMinute = fc.integer({ min: 1, max: 1_000_000 });
  const rulesArb = fc.tuple(perMinute, perMinute).map(([rpm, tpm]): BucketRule[] => [
    { name: 'rpm', perMinute: rpm },
    { name: 'tpm', perMinute: tpm },
  ]);
  const op = fc.oneof(
    fc.record({
      kind: fc.constant('take' as const),
      amounts: fc.tuple(fc.integer({ min: 0, max: 2_000_000 }), fc.integer({ min: 0, max: 2_000_000 })),
    }),
    fc.record({
      kind: fc.constant('adjust' as const),
      amounts: fc.tuple(
        fc.integer({ min: -2_000_000, max: 2_000_000 }),
        fc.integer({ min: -2_000_000, max: 2_000_000 }),
      ),
    }),
    fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 120_000 }) }),
  );

  it('never reports more than capacity, and a refused take changes nothing', () => {
    fc.assert(
      fc.property(rulesArb, fc.array(op, { maxLength: 40 }), (rules, ops) => {
        let states: Array<TokenBucketState | undefined> = [undefined, undefined];
        let now = 0;
        for (const next of ops) {
          if (next.kind === 'advance') {
            now += next.ms;
          } else if (next.kind === 'adjust') {
            states = adjustTokens(states, rules, next.amounts, now);
            states.forEach((state, index) => {
              expect(state!.units).toBeLessThanOrEqual(capacityUnits(rules[index].perMinute));
            });
          } else {
            const before = rules.map((rule, index) => unitsAt(states[index], rule.perMinute, now));
            const { decision, next: after } = takeTokens(states, rules, next.amounts, now);
            decision.buckets.forEach((bucket, index) => {
              expect(bucket.remaining).toBeLessThanOrEqual(rules[index].perMinute);
              expect(bucket.remaining).toBeGreaterThanOrEqual(0);
              expect(bucket.resetMs).toBeGreaterThanOrEqual(0);
            });
            expect(decision.allowed).toBe(fits(states, rules, next.amounts, now));
            expect(decision.allowed).toBe(after !== undefined);
            expect(decision.allowed).toBe(decision.retryAfterMs === 0);
            if (after) {
              after.forEach((state, index) => {
                expect(state.units).toBe(before[index] - next.amounts[index] * U);
              });
              states = after;
            } else {
              // Refused: the buckets report exactly what they held before, and nothing is written.
              expect(decision.buckets).toEqual(
                rules.map((rule, index) => bucketState(rule.name, before[index], rule.perMinute)),
              );
            }
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  it('admits a refused take exactly retryAfterMs later, not a millisecond sooner', () => {
    fc.assert(
      fc.property(rulesArb, fc.array(op, { maxLength: 20 }), fc.tuple(fc.nat(), fc.nat()), (rules, ops, asked) => {
        let states: Array<TokenBucketState | undefined> = [undefined, undefined];
        let now = 0;
        for (const next of ops) {
          if (next.kind === 'advance') now += next.ms;
          else if (next.kind === 'adjust') states = adjustTokens(states, rules, next.amounts, now);
          else states = takeTokens(states, rules, next.amounts, now).next ?? states;
        }
        // Amounts within capacity, so some wait admits them.
        const amounts = rules.map((rule, index) => asked[index] % (rule.perMinute + 1));
        const { decision } = takeTokens(states, rules, amounts, now);
        if (decision.allowed) return;

        expect(fits(states, rules, amounts, now + decision.retryAfterMs - 1)).toBe(false);
        expect(fits(states, rules, amounts, now + decision.retryAfterMs)).toBe(true);
        expect(takeTokens(states, rules, amounts, now + decision.retryAfterMs).decision.allowed).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('refills the same in one step as in many', () => {
    fc.assert(
      fc.property(
        perMinute,
        fc.integer({ min: -1_000_000, max: 1_000_000 }),
        fc.array(fc.integer({ min: 0, max: 10_000 }), { maxLength: 20 }),
        (rate, tokens, waits) => {
          const start = holding(Math.min(tokens, rate));
          let stepped = start;
          let now = 0;
          for (const wait of waits) {
            now += wait;
            stepped = { units: unitsAt(stepped, rate, now), updatedAt: now };
          }
          expect(unitsAt(stepped, rate, now)).toBe(unitsAt(start, rate, now));
        },
      ),
      { numRuns: 500 },
    );
  });
});
