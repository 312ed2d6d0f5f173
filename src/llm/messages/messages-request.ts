import { parseBodyFields, ResilienceError } from '../../common';
import type { ChatRequest, PassThroughRequest } from '../chat.types';
import {
  type CountTokensRequest,
  countTokensRequestSchema,
  type MessagesRequest,
  messagesRequestSchema,
} from '../wire';
import { toChatRequest } from './messages-to-chat-request';

/** Server-side features of Anthropic's API that a route's targets would not run. */
const REFUSED_FIELDS = ['mcp_servers', 'container'] as const;

/** The request as the route reads it, or `invalid_request` naming the first field that is wrong. */
export function parseMessagesRequest(body: unknown): MessagesRequest;
export function parseMessagesRequest(body: unknown, schema: typeof countTokensRequestSchema): CountTokensRequest;
export function parseMessagesRequest(
  body: unknown,
  schema: typeof messagesRequestSchema | typeof countTokensRequestSchema = messagesRequestSchema,
): CountTokensRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return parseBodyFields(schema, body);
  for (const field of REFUSED_FIELDS) {
    if ((body as Record<string, unknown>)[field] !== undefined) {
      throw new ResilienceError('invalid_request', `${field}: not supported through Bulkhead`);
    }
  }
  const tools = (body as { tools?: unknown }).tools;
  if (Array.isArray(tools)) {
    const server = tools.find(
      (entry: unknown) =>
        typeof entry === 'object' &&
        entry !== null &&
        'type' in entry &&
        entry.type !== undefined &&
        entry.type !== 'custom',
    ) as { type: unknown } | undefined;
    if (server) {
      throw new ResilienceError(
        'invalid_request',
        `tools: the server tool ${JSON.stringify(String(server.type)).slice(0, 80)} is not supported through Bulkhead; ` +
          'send your own tools (name, description, input_schema)',
      );
    }
  }
  return parseBodyFields(schema, body);
}

/** `anthropic-beta` features as Anthropic names them (`interleaved-thinking-2025-05-14`). */
const BETA_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const MAX_BETAS = 32;

/**
 * A Messages request as the pipeline runs it: the Chat Completions translation, and the request
 * itself for the targets that speak the Messages API.
 *
 * @param betaHeader the request's `anthropic-beta` (comma-separated, maybe repeated)
 */
export function readMessagesCall(
  body: unknown,
  betaHeader: string | string[] | undefined,
  schema: typeof messagesRequestSchema | typeof countTokensRequestSchema = messagesRequestSchema,
): { request: ChatRequest; passThrough: PassThroughRequest } {
  const betas = parseBetas(betaHeader);
  const parsed = parseMessagesRequest(body, schema as typeof countTokensRequestSchema);
  const { model: _model, stream: _stream, ...nativeBody } = parsed;
  return {
    request: toChatRequest(parsed),
    passThrough: {
      format: 'anthropic-messages',
      body: nativeBody,
      betas,
      extraInputTokens: thinkingBytes(parsed.messages),
    },
  };
}

function parseBetas(header: string | string[] | undefined): string[] {
  const values = header === undefined ? [] : typeof header === 'string' ? [header] : header;
  const betas = values.flatMap((value) => value.split(',').map((name) => name.trim())).filter(Boolean);
  const wrong = betas.find((name) => !BETA_NAME.test(name));
  if (wrong !== undefined || betas.length > MAX_BETAS) {
    throw new ResilienceError(
      'invalid_request',
      `anthropic-beta: at most ${MAX_BETAS} comma-separated feature names (letters, digits, '.', '_', '-')`,
    );
  }
  return [...new Set(betas)];
}

/** Earlier turns' thinking, in UTF-8 bytes: a bound of its tokens, which the translation does not show. */
function thinkingBytes(messages: CountTokensRequest['messages']): number {
  let bytes = 0;
  for (const { content } of messages) {
    if (typeof content === 'string') continue;
    for (const part of content) {
      if (part.type !== 'thinking' && part.type !== 'redacted_thinking') continue;
      const text = part.type === 'thinking' ? part.thinking : part.data;
      if (typeof text === 'string') bytes += Buffer.byteLength(text, 'utf8');
    }
  }
  return bytes;
}
