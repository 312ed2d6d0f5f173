import { z } from 'zod';
import { MAX_CONTENT_BLOCKS } from '../limits';
import { tokenCount } from '../token-count';
import type { MessagesStopReason } from './stop-reasons';
import { contentBlock, optionalText, partialUsage } from './parts';

/*
 * Anthropic's `message` answer, typed once: as an upstream answers it (the schema its reader
 * checks) and as the `/v1/messages` ingress writes it for a translated answer (the types).
 */

/** A whole (non-streamed) `message`: its blocks, and the two counts every answer has. */
export const anthropicAnswer = z.looseObject({
  id: z.string(),
  model: optionalText,
  content: z.array(contentBlock).max(MAX_CONTENT_BLOCKS),
  stop_reason: z.string().nullable().optional(),
  usage: partialUsage.extend({ input_tokens: tokenCount, output_tokens: tokenCount }),
});

/** A content block of Anthropic's answer. */
export type MessagesContentBlock =
  { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

/** Anthropic's usage: its `input_tokens` leaves out what was read from or written to its prompt cache. */
export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  /** The cache writes by how long they are kept: only when the provider said. */
  cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

/** Anthropic's `message` answer. */
export interface MessagesAnswer {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: MessagesContentBlock[];
  stop_reason: MessagesStopReason;
  stop_sequence: null;
  usage: MessagesUsage;
  [field: string]: unknown;
}
