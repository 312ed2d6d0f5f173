import type { ChatUsage } from '../chat.types';
import type { TokenUsage } from '../pricing';
import { isObject } from '../providers/json-shape';

/** Why a count of a provider's usage was not charged as given. */
export type UsageRejectionReason = 'not_a_number' | 'not_finite' | 'negative' | 'not_integer' | 'above_bound';

/** One count of a provider's usage that was not charged as given: which one and why, never its value. */
export interface UsageRejection {
  /** `prompt_tokens`, `completion_tokens`, `cached_tokens`, `cache_write_tokens` or `cache_write_1h_tokens`. */
  field: string;
  reason: UsageRejectionReason;
}

/** What an attempt's hold covered, in tokens: the most it can be charged for. */
export interface UsageBounds {
  /** The prompt estimate the hold was made for: an upper bound of any prompt the request makes. */
  promptTokens: number;
  /** The output cap the provider was held to, over all choices. */
  completionTokens: number;
}

/** A provider's usage as it is charged. */
export interface BilledUsage {
  /** The usage as charged and shown: the provider's own object when all of it was sane. */
  usage: ChatUsage;
  /** The same tokens by what they are priced as. */
  tokens: TokenUsage;
  /** Each count that was not taken as given. */
  rejections: UsageRejection[];
}

/**
 * A provider's usage bounded by what the attempt's hold covered, so no usage it reports can
 * charge more than was held, or a count that is not one (`-5`, `1e308`, `Infinity`, `2.5`, `"7"`).
 * Each count is kept within its bound: the prompt within the estimate, the completion within the
 * cap, cache reads within the prompt, cache writes within the rest, hour-long writes within the
 * writes. A count past its bound is taken at the bound; a fraction is rounded up. A count that
 * cannot be read at all (not a number, not finite, negative) is taken at the dearest the hold
 * allows, since not knowing a count is not knowing it was small: the prompt and completion at
 * their bounds, no cache reads, every other prompt token a cache write (for an hour if that
 * count is the unreadable one). Within these bounds {@link worstCaseMicros} is never exceeded.
 */
export function billedUsage(usage: ChatUsage, bounds: UsageBounds): BilledUsage {
  const rejections: UsageRejection[] = [];
  const read = (value: unknown, field: string, bound: number, unreadable: number): number => {
    const reason = rejectionOf(value, bound);
    if (reason === undefined) return value as number;
    rejections.push({ field, reason });
    if (reason === 'above_bound') return bound;
    if (reason === 'not_integer') return Math.min(Math.ceil(value as number), bound);
    return unreadable;
  };
  const details = isObject(usage.prompt_tokens_details) ? usage.prompt_tokens_details : undefined;
  const prompt = read(usage.prompt_tokens, 'prompt_tokens', bounds.promptTokens, bounds.promptTokens);
  const completion = read(
    usage.completion_tokens,
    'completion_tokens',
    bounds.completionTokens,
    bounds.completionTokens,
  );
  // A cache count left out or null (as some OpenAI-compatible servers send) is none, not a bad one.
  const optional = (field: 'cached_tokens' | 'cache_write_tokens', bound: number, unreadable: number): number =>
    details?.[field] == null ? 0 : read(details[field], field, bound, unreadable);
  const cached = optional('cached_tokens', prompt, 0);
  const written = optional('cache_write_tokens', prompt - cached, prompt - cached);
  const hourGiven = details?.cache_write_1h_tokens;
  const writtenForAnHour = hourGiven == null ? undefined : read(hourGiven, 'cache_write_1h_tokens', written, written);
  const tokens: TokenUsage = {
    inputTokens: prompt - cached - written,
    cachedInputTokens: cached,
    cacheWriteInputTokens: written - (writtenForAnHour ?? 0),
    cacheWrite1hInputTokens: writtenForAnHour ?? 0,
    outputTokens: completion,
  };
  const total = prompt + completion;
  if (rejections.length === 0 && usage.total_tokens === total) return { usage, tokens, rejections };
  const billed: ChatUsage = { ...usage, prompt_tokens: prompt, completion_tokens: completion, total_tokens: total };
  if (details) {
    billed.prompt_tokens_details = {
      ...details,
      ...(details.cached_tokens === undefined ? {} : { cached_tokens: cached }),
      ...(details.cache_write_tokens === undefined ? {} : { cache_write_tokens: written }),
      ...(writtenForAnHour === undefined ? {} : { cache_write_1h_tokens: writtenForAnHour }),
    };
  }
  return { usage: billed, tokens, rejections };
}

function rejectionOf(value: unknown, bound: number): UsageRejectionReason | undefined {
  if (typeof value !== 'number') return 'not_a_number';
  if (!Number.isFinite(value)) return 'not_finite';
  if (value < 0) return 'negative';
  if (!Number.isInteger(value)) return 'not_integer';
  return value > bound ? 'above_bound' : undefined;
}
