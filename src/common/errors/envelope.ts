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
    /** OpenAI's error fields, on the OpenAI-compatible route: both the kind, and `param` null. */
    type?: ErrorKind;
    code?: ErrorKind;
    param?: null;
  };
  callId?: string;
  toolId?: string;
}

/** What is known about the call a failure belongs to; only validated values go here. */
export interface CallLabels {
  callId?: string;
  toolId?: string;
  /** Adds OpenAI's `type`, `code` and `param`, so OpenAI's SDKs read the error as their own. */
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
    envelope.error.code = error.kind;
    envelope.error.param = null;
  }
  if (labels.callId !== undefined) envelope.callId = labels.callId;
  if (labels.toolId !== undefined) envelope.toolId = labels.toolId;
  return envelope;
}

/** `Retry-After` is whole seconds; round up so a client never comes back too early. */
export function retryAfterSeconds(retryAfterMs: number): string {
  return String(Math.max(1, Math.ceil(retryAfterMs / 1000)));
}
