import type { ErrorKind } from './error-kinds';
import { type CallLabels, type ErrorEnvelope, toEnvelope } from './envelope';
import type { ResilienceError } from './resilience-error';

/** Anthropic's error types (its `error.type`), as its SDKs and Claude Code read them. */
export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'api_error'
  | 'timeout_error'
  | 'overloaded_error';

/**
 * Each kind as Anthropic would answer it: its type, and its status where Anthropic's differs
 * from ours. Anthropic says "overloaded" with 529 (which its clients retry and show as such),
 * and a failure behind it with 500 `api_error`; it has no 502 or 503.
 */
const ANTHROPIC_ERRORS: Record<ErrorKind, { type: AnthropicErrorType; status?: number }> = {
  invalid_request: { type: 'invalid_request_error' },
  schema: { type: 'invalid_request_error' },
  unauthorized: { type: 'authentication_error' },
  budget_exceeded: { type: 'billing_error' },
  contained: { type: 'permission_error' },
  egress_denied: { type: 'permission_error' },
  not_found: { type: 'not_found_error' },
  tool_changed: { type: 'invalid_request_error' },
  idempotency_conflict: { type: 'invalid_request_error' },
  rate_limited: { type: 'rate_limit_error' },
  queue_full: { type: 'overloaded_error', status: 529 },
  queue_expired: { type: 'overloaded_error', status: 529 },
  circuit_open: { type: 'overloaded_error', status: 529 },
  stopped: { type: 'overloaded_error', status: 529 },
  unavailable: { type: 'overloaded_error', status: 529 },
  overloaded: { type: 'overloaded_error', status: 529 },
  timeout: { type: 'timeout_error' },
  transient: { type: 'api_error', status: 500 },
  internal: { type: 'api_error' },
};

/** An error answer in Anthropic's shape, with the envelope's own fields beside its `type` and `message`. */
export interface AnthropicErrorBody {
  type: 'error';
  error: { type: AnthropicErrorType } & Omit<ErrorEnvelope['error'], 'type' | 'code' | 'param'>;
  callId?: string;
  toolId?: string;
}

/** The HTTP status Anthropic would answer `error` with. */
export function anthropicStatus(error: ResilienceError): number {
  return ANTHROPIC_ERRORS[error.kind].status ?? error.status;
}

/**
 * `error` as Anthropic's `{"type":"error","error":{"type","message"}}`, which its SDKs turn into
 * their typed errors, with the envelope's `kind`, `attempts`, `jsonrpcCode` and `retryAfterMs`
 * in the same `error` object, and the call's labels beside it.
 */
export function toAnthropicError(error: ResilienceError, labels: CallLabels = {}): AnthropicErrorBody {
  const { error: fields, ...labelled } = toEnvelope(error, { callId: labels.callId, toolId: labels.toolId });
  return { type: 'error', error: { ...fields, type: ANTHROPIC_ERRORS[error.kind].type }, ...labelled };
}
