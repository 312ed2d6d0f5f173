import type { ChatMessage, ChatRequest } from '../../chat.types';

/**
 * Request fields that make a request never semantically cached, whatever their value: each
 * asks for an answer whose shape or content a similar question's answer does not have. Tools
 * and functions (the answer may be a request to act), `response_format` (a schema the other
 * answer was not held to), `logprobs`/`top_logprobs` (token-level data of one generation).
 */
export const FIELDS_NEVER_SEMANTIC: readonly string[] = Object.freeze([
  'tools',
  'tool_choice',
  'functions',
  'function_call',
  'response_format',
  'logprobs',
  'top_logprobs',
]);

/**
 * Whether the semantic cache may answer `request`, or store its answer: a plain question. None
 * of {@link FIELDS_NEVER_SEMANTIC} (a `false` or null counts as left out), `n` of 1 or left out,
 * and the last message a user's, whose content is text (a string, or text parts only) with at
 * least one character that is not white space: that text is what is compared by similarity,
 * and everything else must match exactly.
 */
export function isSemanticCacheable(request: ChatRequest): boolean {
  for (const field of FIELDS_NEVER_SEMANTIC) {
    const value = request[field];
    if (value !== undefined && value !== null && value !== false) return false;
  }
  if (request.n !== undefined && request.n !== null && request.n !== 1) return false;
  if (!Array.isArray(request.messages) || request.messages.length === 0) return false;
  const question = questionText(request.messages.at(-1)!);
  return question !== undefined && question.trim() !== '';
}

/**
 * The text of a user message whose content is only text (text parts joined by a line break),
 * or undefined for any other message: another role, an image, audio or a file in it.
 */
export function questionText(message: ChatMessage): string | undefined {
  if (typeof message !== 'object' || message === null || message.role !== 'user') return undefined;
  const { content } = message;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content) || content.length === 0) return undefined;
  const texts: string[] = [];
  for (const part of content) {
    if (typeof part !== 'object' || part === null || part.type !== 'text' || typeof part.text !== 'string') {
      return undefined;
    }
    texts.push(part.text);
  }
  return texts.join('\n');
}
