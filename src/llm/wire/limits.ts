/**
 * What an answer may number, at most: the readers refuse an upstream's index past these, so that
 * nothing Bulkhead builds is ever sized by a number a model server sent. Far above what any
 * request can produce (OpenAI caps `n` at 128; no model emits a thousand tool calls or content
 * blocks in one turn).
 */
export const MAX_CHOICES = 128;
export const MAX_TOOL_CALLS = 1024;
export const MAX_CONTENT_BLOCKS = 1024;

/** Whether `index` numbers one of at most `bound` things: a whole number in [0, bound). */
export function isIndexBelow(index: unknown, bound: number): index is number {
  return typeof index === 'number' && Number.isInteger(index) && index >= 0 && index < bound;
}

/**
 * Characters one output token may stand for, at the most: the longest tokens of today's
 * vocabularies (runs of spaces, dashes or digits) are well under a hundred.
 */
const MAX_CHARS_PER_OUTPUT_TOKEN = 256;
/** What an answer may always hold, however small its cap: a mebi-character. */
const MIN_ANSWER_CHARACTERS = 1 << 20;
/**
 * What an answer may hold, however large its cap: 16 Mi characters (32 MB in memory), 128 per
 * token of the largest outputs models offer (128k tokens); a client's `max_tokens` does not raise
 * what one upstream can make the process hold.
 */
const MAX_ANSWER_CHARACTERS = 1 << 24;

/**
 * The most characters (text, tool calls, thinking) an answer held to `outputTokens` can carry: a
 * stream that sends more is not that answer, and is refused rather than held in memory.
 */
export function maxAnswerCharacters(outputTokens: number): number {
  return Math.min(MAX_ANSWER_CHARACTERS, Math.max(MIN_ANSWER_CHARACTERS, outputTokens * MAX_CHARS_PER_OUTPUT_TOKEN));
}
