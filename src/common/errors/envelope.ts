import type { ErrorKind } from './error-kinds';
import type { ResilienceError } from './resilience-error';

/** The body of every failure response (docs/http-contract.md section 6). */
export interface ErrorEnvelope {
  error: {
    kind: ErrorKind;
    message: string;
    attempts: number;
    jsonrpcCode: number;
    retryAfterMs?: number;
    /**
     * OpenAI's error fields, on every path under `/v1/`: both the kind, and `param` null, but
     * where the failure names OpenAI's own `code` and `param` (ResilienceError's `openai`).
     */
    type?: ErrorKind;
    code?: string;
    param?: string | null;
  };
  callId?: string;
  toolId?: string;
}

/** What is known about the call a failure belongs to; only validated values go here. */
export interface CallLabels {
  callId?: string;
  toolId?: string;
  /**
   * Adds OpenAI's `type`, `code` and `param`, so OpenAI's SDKs read the error as their own: on
   * every path under `/v1/` ({@link isOpenAiPath}), and on an error event of a chat stream.
   */
  openai?: boolean;
}

export function toEnvelope(error: ResilienceError, labels: CallLabels = {}): ErrorEnvelope {
  const envelope: ErrorEnvelope = {
    error: {
      kind: error.kind,
      message: error.message,
      attempts: error.attempts,
      jsonrpcCode: error.jsonrpcCode,
    },
  };
  if (error.retryAfterMs !== undefined) envelope.error.retryAfterMs = error.retryAfterMs;
  if (labels.openai) {
    envelope.error.type = error.kind;
    envelope.error.code = error.openai?.code ?? error.kind;
    envelope.error.param = error.openai?.param ?? null;
  }
  if (labels.callId !== undefined) envelope.callId = labels.callId;
  if (labels.toolId !== undefined) envelope.toolId = labels.toolId;
  return envelope;
}

/** The envelope, also a JSON-RPC error response without id: what an MCP client reads of a refused request. */
export interface JsonRpcErrorEnvelope {
  jsonrpc: '2.0';
  id: null;
  /** The envelope's error without OpenAI's fields, whose `code` would be the kind. */
  error: Omit<ErrorEnvelope['error'], 'type' | 'code' | 'param'> & { code: number };
  callId?: string;
  toolId?: string;
}

/**
 * A refusal of `/mcp`'s HTTP request as both MCP clients and the envelope's readers take it: the
 * JSON-RPC `code` beside the envelope's fields (`code` is the envelope's `jsonrpcCode`), as the
 * SDK's own transport answers with a JSON-RPC error body and no id.
 */
export function toJsonRpcEnvelope(error: ResilienceError, labels: CallLabels = {}): JsonRpcErrorEnvelope {
  const { error: fields, ...rest } = toEnvelope(error, { ...labels, openai: false });
  const { type: _type, code: _code, param: _param, ...kept } = fields;
  return { jsonrpc: '2.0', id: null, ...rest, error: { code: error.jsonrpcCode, ...kept } };
}

/** `Retry-After` is whole seconds; round up so a client never comes back too early. */
export function retryAfterSeconds(retryAfterMs: number): string {
  return String(Math.max(1, Math.ceil(retryAfterMs / 1000)));
}

/**
 * The headers of a failure that says when to try again: `Retry-After` (whole seconds, at least
 * 1) and `retry-after-ms` (whole milliseconds, rounded up), the one OpenAI's and Vercel's SDKs
 * read first: they honour `Retry-After` only below 60 s, and retry sooner on their own above it.
 */
export function retryAfterHeaders(retryAfterMs: number): { 'retry-after': string; 'retry-after-ms': string } {
  return {
    'retry-after': retryAfterSeconds(retryAfterMs),
    'retry-after-ms': String(Math.max(0, Math.ceil(retryAfterMs))),
  };
}

/** Where OpenAI's SDKs call: their `baseURL` is the service + `/v1`. */
const OPENAI_PREFIX = '/v1/';
/** Anthropic's Messages API: `/v1/messages` and `/v1/messages/count_tokens`. */
const ANTHROPIC_PREFIX = '/v1/messages';

/**
 * Whose error shape a failure takes: ours (the envelope), OpenAI's fields added, Anthropic's, or
 * the envelope as a JSON-RPC error (`/mcp`'s refusal of a web page's request).
 */
export type ErrorWire = 'envelope' | 'openai' | 'anthropic' | 'jsonrpc';

/**
 * The error shape a request expects, from where it went and what it sent: Anthropic's on the
 * Messages routes and for any request with `anthropic-version` (Anthropic's SDKs send it on
 * everything, `/v1/models` too), OpenAI's fields elsewhere under `/v1/`, else the envelope.
 */
export function errorWireOf(url: string | undefined, anthropicVersion: unknown): ErrorWire {
  if (anthropicVersion !== undefined || url?.startsWith(ANTHROPIC_PREFIX)) return 'anthropic';
  return isOpenAiPath(url) ? 'openai' : 'envelope';
}

/**
 * Whether a request's URL (path and query, as its request line has it) is under `/v1/`, where
 * an OpenAI SDK pointed at the service sends everything it asks (`/v1/models` as much as
 * `/v1/chat/completions`): its failures carry OpenAI's error fields, or the SDKs show raw JSON.
 */
export function isOpenAiPath(url: string | undefined): boolean {
  return url !== undefined && url.startsWith(OPENAI_PREFIX);
}
