import { priceFromUsd } from './price';

describe('priceFromUsd', () => {
  it('converts USD per million tokens to whole micro-dollars per million tokens', () => {
    expect(
      priceFromUsd(
        { inputPerMTokUsd: 3, cachedInputPerMTokUsd: 0.3, cacheWriteInputPerMTokUsd: 3.75, outputPerMTokUsd: 15 },
        'x',
      ),
    ).toEqual({
      inputMicrosPerMTok: 3_000_000,
      cachedInputMicrosPerMTok: 300_000,
      cacheWriteInputMicrosPerMTok: 3_750_000,
      cacheWrite1hInputMicrosPerMTok: 3_750_000,
      outputMicrosPerMTok: 15_000_000,
    });
    expect(priceFromUsd({ inputPerMTokUsd: 0.005, outputPerMTokUsd: 0.000001 }, 'x').outputMicrosPerMTok).toBe(1);
  });

  it('prices cache reads and writes as input when they have no rate of their own', () => {
    expect(priceFromUsd({ inputPerMTokUsd: 0.15, outputPerMTokUsd: 0.6 }, 'x')).toEqual({
      inputMicrosPerMTok: 150_000,
      cachedInputMicrosPerMTok: 150_000,
      cacheWriteInputMicrosPerMTok: 150_000,
      cacheWrite1hInputMicrosPerMTok: 150_000,
      outputMicrosPerMTok: 600_000,
    });
  });

  it('prices an hour-long cache write at its own rate, else as a 5-minute one', () => {
    const anthropic = { inputPerMTokUsd: 3, cacheWriteInputPerMTokUsd: 3.75, outputPerMTokUsd: 15 };
    expect(priceFromUsd({ ...anthropic, cacheWrite1hInputPerMTokUsd: 6 }, 'x')).toMatchObject({
      cacheWriteInputMicrosPerMTok: 3_750_000,
      cacheWrite1hInputMicrosPerMTok: 6_000_000,
    });
    expect(priceFromUsd(anthropic, 'x').cacheWrite1hInputMicrosPerMTok).toBe(3_750_000);
    expect(() => priceFromUsd({ ...anthropic, cacheWrite1hInputPerMTokUsd: -6 }, 'x')).toThrow(
      /x cacheWrite1hInputPerMTokUsd/,
    );
  });

  it('converts long-context rates with their threshold', () => {
    const price = priceFromUsd(
      {
        inputPerMTokUsd: 2.5,
        outputPerMTokUsd: 15,
        longContext: { fromInputTokens: 272_000, inputPerMTokUsd: 5, outputPerMTokUsd: 22.5 },
      },
      'x',
    );
    expect(price.longContext).toEqual({
      fromInputTokens: 272_000,
      inputMicrosPerMTok: 5_000_000,
      cachedInputMicrosPerMTok: 5_000_000,
      cacheWriteInputMicrosPerMTok: 5_000_000,
      cacheWrite1hInputMicrosPerMTok: 5_000_000,
      outputMicrosPerMTok: 22_500_000,
    });
  });

  it.each([
    [
      'a rate finer than a micro-dollar',
      { inputPerMTokUsd: 0.0000001, outputPerMTokUsd: 1 },
      /x inputPerMTokUsd must be a whole number of micro-dollars/,
    ],
    [
      'a rate with a seventh decimal',
      { inputPerMTokUsd: 1, outputPerMTokUsd: 1.0000005 },
      /x outputPerMTokUsd must be a whole number/,
    ],
    [
      'a negative rate',
      { inputPerMTokUsd: -1, outputPerMTokUsd: 1 },
      /x inputPerMTokUsd: a USD amount must be a finite number/,
    ],
    ['a NaN rate', { inputPerMTokUsd: 1, outputPerMTokUsd: Number.NaN }, /x outputPerMTokUsd/],
    [
      'an infinite rate',
      { inputPerMTokUsd: 1, outputPerMTokUsd: 1, cachedInputPerMTokUsd: Infinity },
      /x cachedInputPerMTokUsd/,
    ],
    [
      'a long-context threshold of 0',
      {
        inputPerMTokUsd: 2,
        outputPerMTokUsd: 8,
        longContext: { fromInputTokens: 0, inputPerMTokUsd: 4, outputPerMTokUsd: 8 },
      },
      /fromInputTokens must be a whole number of at least 1/,
    ],
    [
      'long-context rates below the base ones',
      {
        inputPerMTokUsd: 2,
        outputPerMTokUsd: 8,
        longContext: { fromInputTokens: 10, inputPerMTokUsd: 1, outputPerMTokUsd: 8 },
      },
      /the long-context inputMicrosPerMTok is below the base one/,
    ],
  ])('refuses %s', (_what, usd, message) => {
    expect(() => priceFromUsd(usd, 'x')).toThrow(RangeError);
    expect(() => priceFromUsd(usd, 'x')).toThrow(message);
  });
});
