import { ERROR_KINDS, type ErrorKind } from './error-kinds';

export interface ResilienceErrorOptions {
  /** Attempts made before the call failed; 0 when it never reached the handler. */
  attempts?: number;
  /** When the caller may usefully try again, in milliseconds; sent as `Retry-After` too. */
  retryAfterMs?: number;
  /** An HTTP status other than the kind's own, where the contract names one (413). */
  status?: number;
  /** The underlying error, kept for logs on our side; never sent to clients. */
  cause?: unknown;
  /**
   * `false`: never retried, whatever its kind's retry rule (a failure the dependency would only
   * answer the same way again, such as an upstream MCP tool's error result); still counted as its
   * kind is by the breaker. Not sent to clients. @default true: the kind's rule decides
   */
  retryable?: boolean;
  /**
   * OpenAI's own `code` and `param` for a failure OpenAI's API names itself (a kept response not
   * found), in place of the kind and null on the OpenAI wire; nothing else changes.
   */
  openai?: OpenAiErrorFields;
}

/** OpenAI's error fields a failure may name for itself. */
export interface OpenAiErrorFields {
  code?: string;
  param?: string;
}

/**
 * A failure with one of the contract's kinds. Its message is written for clients, so it never
 * holds upstream bodies, arguments, prompts or secrets.
 *
 * These are expected outcomes (a full queue, an open circuit), not bugs, so no stack trace is
 * captured: a stack costs about six times the rest of the error and nobody reads it.
 */
export class ResilienceError extends Error {
  readonly kind: ErrorKind;
  readonly attempts: number;
  readonly retryAfterMs: number | undefined;
  readonly status: number;
  /** False when this failure is never retried, whatever its kind; see {@link ResilienceErrorOptions.retryable}. */
  readonly retryable: boolean;
  /** See {@link ResilienceErrorOptions.openai}. */
  readonly openai: OpenAiErrorFields | undefined;

  constructor(kind: ErrorKind, message: string, options: ResilienceErrorOptions = {}) {
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    Error.stackTraceLimit = stackTraceLimit;
    this.kind = kind;
    this.attempts = options.attempts ?? 0;
    this.retryAfterMs = options.retryAfterMs;
    this.status = options.status ?? ERROR_KINDS[kind].status;
    this.retryable = options.retryable ?? true;
    this.openai = options.openai;
  }

  get jsonrpcCode(): number {
    return ERROR_KINDS[this.kind].jsonrpcCode;
  }

  /** The same failure with the number of attempts the call made. */
  withAttempts(attempts: number): ResilienceError {
    if (attempts === this.attempts) return this;
    return new ResilienceError(this.kind, this.message, {
      attempts,
      retryAfterMs: this.retryAfterMs,
      status: this.status,
      cause: this.cause,
      retryable: this.retryable,
      openai: this.openai,
    });
  }
}

export function isResilienceError(value: unknown): value is ResilienceError {
  return value instanceof ResilienceError;
}

/**
 * `error` if it is a ResilienceError, else an `internal` one that keeps it as its cause (for
 * the log, never for the client).
 */
export function asResilienceError(error: unknown): ResilienceError {
  return isResilienceError(error) ? error : new ResilienceError('internal', 'internal error', { cause: error });
}

Object.defineProperty(ResilienceError.prototype, 'name', { value: 'ResilienceError' });
