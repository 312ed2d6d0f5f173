import { microsToUsd, usdToMicros } from '../../budget';

/**
 * What one million tokens of each kind cost, in integer micro-dollars: `2_500_000` is $2.50 per
 * million tokens. Kept as integers so a cost is exact integer arithmetic, never a float sum.
 */
export interface Rates {
  /** Prompt tokens neither read from nor written to the provider's prompt cache. */
  readonly inputMicrosPerMTok: number;
  /** Prompt tokens read from the provider's prompt cache. */
  readonly cachedInputMicrosPerMTok: number;
  /** Prompt tokens written to the provider's prompt cache for 5 minutes (Anthropic: 1.25x input). */
  readonly cacheWriteInputMicrosPerMTok: number;
  /** Prompt tokens written to the provider's prompt cache for an hour (Anthropic: 2x input). */
  readonly cacheWrite1hInputMicrosPerMTok: number;
  /** Completion tokens, reasoning tokens included. */
  readonly outputMicrosPerMTok: number;
}

/** The price of one `provider/model`. */
export interface Price extends Rates {
  /**
   * Long-context pricing: once a request's prompt (every prompt token, cached or not) reaches
   * `fromInputTokens`, the whole request is billed at these rates instead.
   */
  readonly longContext?: Rates & { readonly fromInputTokens: number };
}

/** Rates in USD per million tokens, as price pages and `llm.prices` write them. */
export interface UsdRates {
  inputPerMTokUsd: number;
  outputPerMTokUsd: number;
  /** @default inputPerMTokUsd (no discount for cache hits) */
  cachedInputPerMTokUsd?: number;
  /** A 5-minute cache write. @default inputPerMTokUsd (cache writes billed as plain input) */
  cacheWriteInputPerMTokUsd?: number;
  /**
   * A 1-hour cache write. @default cacheWriteInputPerMTokUsd (a provider with one kind of write
   * bills both alike)
   */
  cacheWrite1hInputPerMTokUsd?: number;
}

/** A price in USD per million tokens, with its long-context rates if it has any. */
export interface UsdPrice extends UsdRates {
  longContext?: UsdRates & { fromInputTokens: number };
}

/**
 * Converts a price in USD per million tokens to micro-dollars per million tokens.
 * @throws RangeError, naming `label`, for a rate that is negative, not finite, or finer than a
 *   micro-dollar per million tokens (rounding it would price every token below its cost), or
 *   long-context rates below the base ones or from fewer than one token.
 */
export function priceFromUsd(usd: UsdPrice, label: string): Price {
  const base = ratesFromUsd(usd, label);
  if (!usd.longContext) return base;
  const { fromInputTokens } = usd.longContext;
  if (!Number.isSafeInteger(fromInputTokens) || fromInputTokens < 1) {
    throw new RangeError(`${label}: longContext.fromInputTokens must be a whole number of at least 1`);
  }
  const long = ratesFromUsd(usd.longContext, `${label} longContext`);
  // A worst case taken at the base rates must not fall below a smaller prompt's long-context cost.
  for (const key of Object.keys(long) as (keyof Rates)[]) {
    if (long[key] < base[key]) throw new RangeError(`${label}: the long-context ${key} is below the base one`);
  }
  return { ...base, longContext: { ...long, fromInputTokens } };
}

function ratesFromUsd(usd: UsdRates, label: string): Rates {
  const input = microsPerMTok(usd.inputPerMTokUsd, `${label} inputPerMTokUsd`);
  const optional = (usdRate: number | undefined, name: keyof UsdRates, otherwise: number): number =>
    usdRate === undefined ? otherwise : microsPerMTok(usdRate, `${label} ${name}`);
  const write5m = optional(usd.cacheWriteInputPerMTokUsd, 'cacheWriteInputPerMTokUsd', input);
  return {
    inputMicrosPerMTok: input,
    cachedInputMicrosPerMTok: optional(usd.cachedInputPerMTokUsd, 'cachedInputPerMTokUsd', input),
    cacheWriteInputMicrosPerMTok: write5m,
    cacheWrite1hInputMicrosPerMTok: optional(usd.cacheWrite1hInputPerMTokUsd, 'cacheWrite1hInputPerMTokUsd', write5m),
    outputMicrosPerMTok: microsPerMTok(usd.outputPerMTokUsd, `${label} outputPerMTokUsd`),
  };
}

function microsPerMTok(usd: number, label: string): number {
  let micros: number;
  try {
    micros = usdToMicros(usd);
  } catch (error) {
    throw new RangeError(`${label}: ${(error as Error).message}`);
  }
  // Converting back gives the same double exactly when the decimal had at most six places.
  if (microsToUsd(micros) !== usd) {
    throw new RangeError(`${label} must be a whole number of micro-dollars per million tokens, got ${usd}`);
  }
  return micros;
}
