import type { Price, Rates } from './price';

/**
 * Tokens of one answer, each counted once: a prompt token is exactly one of `inputTokens`,
 * `cachedInputTokens`, `cacheWriteInputTokens` or `cacheWrite1hInputTokens` (OpenAI's
 * `prompt_tokens` is their sum, its `cached_tokens` the second).
 */
export interface TokenUsage {
  /** Prompt tokens neither read from nor written to the prompt cache. */
  inputTokens: number;
  /** @default 0 */
  cachedInputTokens?: number;
  /** Written to the prompt cache for 5 minutes (or for a time the provider did not say). @default 0 */
  cacheWriteInputTokens?: number;
  /** Written to the prompt cache for an hour. @default 0 */
  cacheWrite1hInputTokens?: number;
  /** Completion tokens, reasoning tokens included. */
  outputTokens: number;
}

const TOKENS_PER_MTOK = 1_000_000n;
const MAX_MICROS = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * What `usage` costs at `price`, in integer micro-dollars, rounded up: computed exactly in
 * micro-dollars per million tokens and divided once, so it is never below the true cost and
 * never more than one micro-dollar above it. The long-context rates apply to the whole request
 * once its prompt (all four kinds) reaches `price.longContext.fromInputTokens`.
 * @throws RangeError for a count that is not a whole number of at least 0, or a cost beyond
 *   `Number.MAX_SAFE_INTEGER` micro-dollars.
 */
export function costMicros(price: Price, usage: TokenUsage): number {
  const input = count(usage.inputTokens, 'inputTokens');
  const cached = count(usage.cachedInputTokens ?? 0, 'cachedInputTokens');
  const written = count(usage.cacheWriteInputTokens ?? 0, 'cacheWriteInputTokens');
  const writtenForAnHour = count(usage.cacheWrite1hInputTokens ?? 0, 'cacheWrite1hInputTokens');
  const output = count(usage.outputTokens, 'outputTokens');
  const long = price.longContext;
  const rates: Rates = long && input + cached + written + writtenForAnHour >= long.fromInputTokens ? long : price;
  return roundUp(
    BigInt(input) * BigInt(rates.inputMicrosPerMTok) +
      BigInt(cached) * BigInt(rates.cachedInputMicrosPerMTok) +
      BigInt(written) * BigInt(rates.cacheWriteInputMicrosPerMTok) +
      BigInt(writtenForAnHour) * BigInt(rates.cacheWrite1hInputMicrosPerMTok) +
      BigInt(output) * BigInt(rates.outputMicrosPerMTok),
  );
}

/**
 * The most one attempt can cost before it is made, in integer micro-dollars, rounded up: every
 * one of the `inputTokensEstimate` prompt tokens at the dearest prompt rate (the provider, not
 * the request, decides what is read from or written to its cache; Anthropic's dearest is an
 * hour's cache write), and `maxOutputTokens` at the output rate, with long-context rates when the estimate reaches them. Never below
 * `costMicros` of any usage with at most that many prompt and completion tokens.
 * @param maxOutputTokens the cap the provider is held to, over all choices (`n` times the
 *   per-choice cap when `n` > 1).
 * @throws RangeError as `costMicros` does.
 */
export function worstCaseMicros(price: Price, inputTokensEstimate: number, maxOutputTokens: number): number {
  const input = count(inputTokensEstimate, 'inputTokensEstimate');
  const output = count(maxOutputTokens, 'maxOutputTokens');
  const long = price.longContext;
  // Both tiers are checked, so the bound holds whatever an override or a test makes of the rates.
  const tiers: Rates[] = long && input >= long.fromInputTokens ? [price, long] : [price];
  let worst = 0n;
  for (const rates of tiers) {
    const promptRate = [
      rates.inputMicrosPerMTok,
      rates.cachedInputMicrosPerMTok,
      rates.cacheWriteInputMicrosPerMTok,
      rates.cacheWrite1hInputMicrosPerMTok,
    ].reduce((a, b) => Math.max(a, b));
    const total = BigInt(input) * BigInt(promptRate) + BigInt(output) * BigInt(rates.outputMicrosPerMTok);
    if (total > worst) worst = total;
  }
  return roundUp(worst);
}

/** Micro-dollars × tokens per million tokens → micro-dollars, rounded up. */
function roundUp(microsTimesTokens: bigint): number {
  const micros = (microsTimesTokens + TOKENS_PER_MTOK - 1n) / TOKENS_PER_MTOK;
  if (micros > MAX_MICROS) {
    throw new RangeError(`a cost must be at most ${Number.MAX_SAFE_INTEGER} micro-dollars, got ${micros}`);
  }
  return Number(micros);
}

function count(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a whole number of tokens of at least 0, got ${String(value)}`);
  }
  return value;
}
