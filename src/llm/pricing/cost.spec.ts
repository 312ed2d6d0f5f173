import fc from 'fast-check';
import { costMicros, type TokenUsage, worstCaseMicros } from './cost';
import { type Price, priceFromUsd, type Rates } from './price';

const GPT_4O = priceFromUsd({ inputPerMTokUsd: 2.5, cachedInputPerMTokUsd: 1.25, outputPerMTokUsd: 10 }, 'gpt-4o');
const GPT_5_NANO = priceFromUsd({ inputPerMTokUsd: 0.05, cachedInputPerMTokUsd: 0.005, outputPerMTokUsd: 0.4 }, 'n');
const GPT_5_4 = priceFromUsd(
  {
    inputPerMTokUsd: 2.5,
    cachedInputPerMTokUsd: 0.25,
    outputPerMTokUsd: 15,
    longContext: { fromInputTokens: 272_000, inputPerMTokUsd: 5, cachedInputPerMTokUsd: 0.5, outputPerMTokUsd: 22.5 },
  },
  'gpt-5.4',
);
const SONNET_4_5 = priceFromUsd(
  {
    inputPerMTokUsd: 3,
    cachedInputPerMTokUsd: 0.3,
    cacheWriteInputPerMTokUsd: 3.75,
    cacheWrite1hInputPerMTokUsd: 6,
    outputPerMTokUsd: 15,
    longContext: {
      fromInputTokens: 200_001,
      inputPerMTokUsd: 6,
      cachedInputPerMTokUsd: 0.6,
      cacheWriteInputPerMTokUsd: 7.5,
      cacheWrite1hInputPerMTokUsd: 12,
      outputPerMTokUsd: 22.5,
    },
  },
  'sonnet',
);

describe('costMicros', () => {
  it('charges each kind of token at its rate', () => {
    // 1,000 × $2.50 + 500 × $1.25 + 200 × $10 per million tokens = 5,125 micro-dollars exactly.
    expect(costMicros(GPT_4O, { inputTokens: 1_000, cachedInputTokens: 500, outputTokens: 200 })).toBe(5_125);
    // 1,000 × $3 + 2,000 × $0.30 + 400 × $3.75 + 100 × $15 per million tokens.
    expect(
      costMicros(SONNET_4_5, {
        inputTokens: 1_000,
        cachedInputTokens: 2_000,
        cacheWriteInputTokens: 400,
        outputTokens: 100,
      }),
    ).toBe(3_000 + 600 + 1_500 + 1_500);
    expect(costMicros(GPT_4O, { inputTokens: 0, outputTokens: 0 })).toBe(0);
  });

  it.each([
    ['plain input', { inputTokens: 100_000 }, 300_000],
    ['a cache read', { cachedInputTokens: 100_000 }, 30_000],
    ['a 5-minute cache write', { cacheWriteInputTokens: 100_000 }, 375_000],
    ['a 1-hour cache write', { cacheWrite1hInputTokens: 100_000 }, 600_000],
  ])('charges 100,000 prompt tokens of %s at its own rate', (_kind, tokens, micros) => {
    expect(costMicros(SONNET_4_5, { inputTokens: 0, ...tokens, outputTokens: 0 })).toBe(micros);
  });

  it('charges output at the output rate, reasoning included', () => {
    expect(costMicros(SONNET_4_5, { inputTokens: 0, outputTokens: 100_000 })).toBe(1_500_000);
  });

  it('counts hour-long cache writes towards the long-context threshold', () => {
    // 100,001 written for an hour + 100,000 for 5 minutes: 200,001, at the long-context rates.
    expect(
      costMicros(SONNET_4_5, {
        inputTokens: 0,
        cacheWriteInputTokens: 100_000,
        cacheWrite1hInputTokens: 100_001,
        outputTokens: 0,
      }),
    ).toBe(750_000 + 1_200_012);
  });

  it('rounds up to the next micro-dollar, never down', () => {
    expect(costMicros(GPT_4O, { inputTokens: 1, outputTokens: 0 })).toBe(3); // 2.5
    expect(costMicros(GPT_5_NANO, { inputTokens: 1, outputTokens: 0 })).toBe(1); // 0.05
    expect(costMicros(GPT_5_NANO, { inputTokens: 20, outputTokens: 0 })).toBe(1); // 1 exactly
    expect(costMicros(GPT_5_NANO, { inputTokens: 21, outputTokens: 0 })).toBe(2); // 1.05
  });

  it('rounds the whole cost once, not each kind of token', () => {
    // 2.5 + 1.25 = 3.75 → 4; rounding each first would charge 3 + 2 = 5.
    expect(costMicros(GPT_4O, { inputTokens: 1, cachedInputTokens: 1, outputTokens: 0 })).toBe(4);
  });

  it('charges 30 micro-dollars where summing USD floats would charge 31', () => {
    // 8 × $2.50 + 1 × $10 per million tokens is 30 micro-dollars exactly; 8 * 2.5e-6 + 10e-6 is
    // 3.0000000000000004e-5 in floating point, which rounds up to 31.
    expect(Math.ceil((8 * 2.5e-6 + 1 * 10e-6) * 1e6)).toBe(31);
    expect(costMicros(GPT_4O, { inputTokens: 8, outputTokens: 1 })).toBe(30);
  });

  it('stays exact where the product passes 2^53, where floating point would round down', () => {
    const price: Price = {
      inputMicrosPerMTok: 1_000_001,
      cachedInputMicrosPerMTok: 0,
      cacheWriteInputMicrosPerMTok: 0,
      cacheWrite1hInputMicrosPerMTok: 0,
      outputMicrosPerMTok: 0,
    };
    // (10^13 + 1) × 1,000,001 = 10,000,010,000,001,000,001: a micro-dollar and a millionth.
    const tokens = 10_000_000_000_001;
    expect(Math.ceil((tokens * 1_000_001) / 1e6)).toBe(10_000_010_000_001);
    expect(costMicros(price, { inputTokens: tokens, outputTokens: 0 })).toBe(10_000_010_000_002);
  });

  it('bills the whole request at long-context rates once the prompt reaches the threshold', () => {
    expect(costMicros(GPT_5_4, { inputTokens: 271_999, outputTokens: 1_000 })).toBe(694_998); // 694,997.5
    expect(costMicros(GPT_5_4, { inputTokens: 272_000, outputTokens: 1_000 })).toBe(1_382_500);
    // Cached prompt tokens count towards the threshold.
    expect(costMicros(GPT_5_4, { inputTokens: 200_000, cachedInputTokens: 72_000, outputTokens: 1_000 })).toBe(
      1_000_000 + 36_000 + 22_500,
    );
  });

  it.each([
    ['a negative count', { inputTokens: -1, outputTokens: 0 }, /inputTokens must be a whole number/],
    ['a fraction', { inputTokens: 0, outputTokens: 1.5 }, /outputTokens must be a whole number/],
    ['NaN', { inputTokens: 0, cachedInputTokens: Number.NaN, outputTokens: 0 }, /cachedInputTokens/],
    ['an unsafe integer', { inputTokens: 0, cacheWriteInputTokens: 2 ** 53, outputTokens: 0 }, /cacheWriteInputTokens/],
  ])('refuses %s of tokens', (_what, usage, message) => {
    expect(() => costMicros(GPT_4O, usage as TokenUsage)).toThrow(message);
  });

  it('refuses a cost past Number.MAX_SAFE_INTEGER micro-dollars', () => {
    const price = priceFromUsd({ inputPerMTokUsd: 10_000, outputPerMTokUsd: 10_000 }, 'dear');
    expect(() => costMicros(price, { inputTokens: Number.MAX_SAFE_INTEGER, outputTokens: 0 })).toThrow(RangeError);
  });
});

describe('worstCaseMicros', () => {
  it('charges every prompt token at the dearest prompt rate and the whole output cap', () => {
    expect(worstCaseMicros(GPT_4O, 1_000, 500)).toBe(2_500 + 5_000);
    // Sonnet 4.5: an hour's cache writes ($6) are dearer than 5 minutes' ($3.75) and input ($3).
    expect(worstCaseMicros(SONNET_4_5, 1_000, 4_096)).toBe(6_000 + 61_440);
    // The $0.600 of 100,000 prompt tokens written for an hour is held, not the 5-minute $0.375.
    expect(worstCaseMicros(SONNET_4_5, 100_000, 0)).toBe(600_000);
    expect(worstCaseMicros(GPT_5_NANO, 1, 0)).toBe(1);
  });

  it('takes long-context rates when the estimate reaches them', () => {
    expect(worstCaseMicros(SONNET_4_5, 200_000, 100)).toBe(1_200_000 + 1_500);
    expect(worstCaseMicros(SONNET_4_5, 200_001, 100)).toBe(2_400_012 + 2_250);
  });

  it('refuses an impossible estimate or cap', () => {
    expect(() => worstCaseMicros(GPT_4O, -1, 10)).toThrow(/inputTokensEstimate/);
    expect(() => worstCaseMicros(GPT_4O, 10, 0.5)).toThrow(/maxOutputTokens/);
  });

  it('is never below the cost of a usage within the estimate and the cap (property)', () => {
    const rates = fc.record({
      inputMicrosPerMTok: fc.integer({ min: 0, max: 1e10 }),
      cachedInputMicrosPerMTok: fc.integer({ min: 0, max: 1e10 }),
      cacheWriteInputMicrosPerMTok: fc.integer({ min: 0, max: 1e10 }),
      cacheWrite1hInputMicrosPerMTok: fc.integer({ min: 0, max: 1e10 }),
      outputMicrosPerMTok: fc.integer({ min: 0, max: 1e10 }),
    });
    const price: fc.Arbitrary<Price> = fc
      .tuple(rates, fc.option(fc.tuple(rates, fc.integer({ min: 1, max: 1e6 }))))
      .map(([base, long]) =>
        long ? { ...base, longContext: { ...atLeast(long[0], base), fromInputTokens: long[1] } } : base,
      );
    fc.assert(
      fc.property(
        price,
        fc.integer({ min: 0, max: 2e6 }),
        fc.integer({ min: 0, max: 2e6 }),
        fc.tuple(
          fc.double({ min: 0, max: 1, noNaN: true }),
          fc.double({ min: 0, max: 1, noNaN: true }),
          fc.double({ min: 0, max: 1, noNaN: true }),
        ),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (price, estimate, cap, cuts, outputShare) => {
          // A split of at most `estimate` prompt tokens into the four kinds.
          const [low, middle, high] = [...cuts].sort((x, y) => x - y);
          const usage: TokenUsage = {
            inputTokens: Math.floor(estimate * low),
            cachedInputTokens: Math.floor(estimate * (middle - low)),
            cacheWriteInputTokens: Math.floor(estimate * (high - middle)),
            cacheWrite1hInputTokens: Math.floor(estimate * (1 - high)),
            outputTokens: Math.floor(cap * outputShare),
          };
          const cost = costMicros(price, usage);
          expect(cost).toBeLessThanOrEqual(worstCaseMicros(price, estimate, cap));
          // Rounded up by less than one micro-dollar.
          const exact = exactMicrosTimesMillion(price, usage);
          expect(BigInt(cost) * 1_000_000n).toBeGreaterThanOrEqual(exact);
          expect(BigInt(cost) * 1_000_000n - exact).toBeLessThan(1_000_000n);
        },
      ),
      { numRuns: 500 },
    );
  });
});

function atLeast(long: Rates, base: Rates): Rates {
  return {
    inputMicrosPerMTok: Math.max(long.inputMicrosPerMTok, base.inputMicrosPerMTok),
    cachedInputMicrosPerMTok: Math.max(long.cachedInputMicrosPerMTok, base.cachedInputMicrosPerMTok),
    cacheWriteInputMicrosPerMTok: Math.max(long.cacheWriteInputMicrosPerMTok, base.cacheWriteInputMicrosPerMTok),
    cacheWrite1hInputMicrosPerMTok: Math.max(long.cacheWrite1hInputMicrosPerMTok, base.cacheWrite1hInputMicrosPerMTok),
    outputMicrosPerMTok: Math.max(long.outputMicrosPerMTok, base.outputMicrosPerMTok),
  };
}

/** The exact cost × 10^6, computed apart from the code under test. */
function exactMicrosTimesMillion(price: Price, usage: TokenUsage): bigint {
  const prompt =
    usage.inputTokens +
    (usage.cachedInputTokens ?? 0) +
    (usage.cacheWriteInputTokens ?? 0) +
    (usage.cacheWrite1hInputTokens ?? 0);
  const rates = price.longContext && prompt >= price.longContext.fromInputTokens ? price.longContext : price;
  return (
    BigInt(usage.inputTokens) * BigInt(rates.inputMicrosPerMTok) +
    BigInt(usage.cachedInputTokens ?? 0) * BigInt(rates.cachedInputMicrosPerMTok) +
    BigInt(usage.cacheWriteInputTokens ?? 0) * BigInt(rates.cacheWriteInputMicrosPerMTok) +
    BigInt(usage.cacheWrite1hInputTokens ?? 0) * BigInt(rates.cacheWrite1hInputMicrosPerMTok) +
    BigInt(usage.outputTokens) * BigInt(rates.outputMicrosPerMTok)
  );
}
