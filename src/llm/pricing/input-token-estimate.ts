import type { ChatContentPart, ChatRequest } from '../chat.types';

/**
 * Tokens a chat template adds once per request: the primed assistant turn (3 for OpenAI's
 * `<|start|>assistant<|message|>`) and whatever a provider wraps the conversation in.
 */
export const REQUEST_OVERHEAD_TOKENS = 32;
/** Tokens a chat template adds per message beyond its fields (OpenAI: 3 markers, 1 for a name). */
export const MESSAGE_OVERHEAD_TOKENS = 8;
/** Tokens around each content part that becomes a block of its own (Anthropic's text blocks). */
export const PART_OVERHEAD_TOKENS = 4;
/**
 * Tokens a provider adds to the prompt when a request carries tools: Anthropic's tool-use system
 * prompt is the largest published (346 tokens for Claude 4 models, 530 for Claude 3 Opus).
 */
export const TOOLS_OVERHEAD_TOKENS = 600;
/** Tokens a provider adds around each tool it renders (OpenAI: about 9 for a function's frame). */
export const TOOL_OVERHEAD_TOKENS = 16;
/**
 * The most one image can count as prompt tokens at a priced model: gpt-4o-mini at `detail: high`
 * bills 2,833 + 5,667 per 512-px tile, up to 8 tiles. Others stay far below (gpt-4o 1,445, the
 * patch-based gpt-4.1 and o4-mini models under 3,800, Claude about 1,600 for a 1.15-megapixel
 * image).
 */
export const MAX_IMAGE_PART_TOKENS = 2_833 + 8 * 5_667;

const IMAGE_PART_TYPES = new Set(['image_url', 'input_image', 'image']);

export interface InputEstimateOptions {
  /**
   * Tokens counted per image part; lower it only for a request that goes to models whose
   * images cost less (a route whose targets are all Claude, say).
   * @default MAX_IMAGE_PART_TOKENS
   */
  imagePartTokens?: number;
}

/**
 * An upper bound of the prompt tokens a provider counts for `request`, cheap enough for every
 * request (no tokenizer: a pass over the strings, measured in bench/token-estimate.ts).
 *
 * Why it is a bound. Text is counted as its UTF-8 bytes. OpenAI's tokenizers (o200k, cl100k)
 * are byte-level BPE: every token stands for at least one byte, so no text of n bytes is more
 * than n tokens, whatever its language, emoji or special-token look-alikes (the API encodes
 * those as text). Anthropic's tokenizer since Claude 3 is not public; the bound relies on it
 * likewise never spending more than one token per byte (true of byte-level BPE and of byte
 * fallback), with the per-part and per-message overheads covering any marker it inserts, and
 * the settlement correcting to Anthropic's reported usage. Everything else that reaches the
 * prompt is counted as the bytes of its JSON: each message's role, name, tool calls and tool
 * call id, and every request field but the messages (tools and their schemas, tool_choice,
 * response_format). Providers render these in fewer tokens than their JSON has bytes (OpenAI's
 * TypeScript-like rendering of a function schema drops the JSON's quotes and keys), and the
 * fixed overheads above cover the frames around them.
 *
 * An image part counts `imagePartTokens`, a bound at its default; an audio part its base64
 * bytes, far above the tokens of any audio encoding. Not bounded: a `file` part (a PDF's pages
 * are also read as images, and a `file_id` names a document of any length) counts as its JSON
 * bytes only.
 * @throws RangeError for an `imagePartTokens` that is not a whole number of at least 0.
 */
export function estimateInputTokens(request: ChatRequest, options: InputEstimateOptions = {}): number {
  const imageTokens = options.imagePartTokens ?? MAX_IMAGE_PART_TOKENS;
  if (!Number.isSafeInteger(imageTokens) || imageTokens < 0) {
    throw new RangeError(`imagePartTokens must be a whole number of at least 0, got ${String(imageTokens)}`);
  }
  const { messages, ...fields } = request;
  let tokens = REQUEST_OVERHEAD_TOKENS + jsonBytes(fields);
  const tools = length(request.tools) + length(request.functions);
  if (tools > 0) tokens += TOOLS_OVERHEAD_TOKENS + tools * TOOL_OVERHEAD_TOKENS;
  for (const message of messages) {
    const { content, ...messageFields } = message;
    tokens += MESSAGE_OVERHEAD_TOKENS + jsonBytes(messageFields) + contentTokens(content, imageTokens);
  }
  return tokens;
}

function contentTokens(content: unknown, imageTokens: number): number {
  if (typeof content === 'string') return Buffer.byteLength(content, 'utf8');
  if (content === null || content === undefined) return 0;
  if (!Array.isArray(content)) return jsonBytes(content);
  let tokens = 0;
  for (const part of content as unknown[]) tokens += PART_OVERHEAD_TOKENS + partTokens(part, imageTokens);
  return tokens;
}

function partTokens(part: unknown, imageTokens: number): number {
  if (typeof part !== 'object' || part === null) return jsonBytes(part);
  const { type, text } = part as ChatContentPart;
  if (type === 'text' && typeof text === 'string') return Buffer.byteLength(text, 'utf8');
  if (IMAGE_PART_TYPES.has(type)) return imageTokens;
  return jsonBytes(part);
}

function jsonBytes(value: unknown): number {
  const json = JSON.stringify(value);
  return json === undefined ? 0 : Buffer.byteLength(json, 'utf8');
}

function length(value: unknown): number {
  return Array.isArray(value) ? value.length : 0;
}
