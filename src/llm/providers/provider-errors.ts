import type { IncomingHttpHeaders } from 'node:http';
import {
  type ErrorKind,
  networkErrorCode,
  ResilienceError,
  type ResilienceErrorOptions,
  upstreamRetryAfterMs,
} from '../../common';
import { isObject } from './json-shape';

/**
 * Why a provider attempt failed, machine-readable: the route puts it in the envelope and in
 * metrics. The kind says what the route does next; the code says why.
 */
export type ProviderFailureCode =
  /** 429 with the quota or spend limit exhausted, 402: waiting does not help. */
  | 'insufficient_quota'
  /** 429: the rate limit; waiting does. */
  | 'rate_limited'
  /** 503, 529: the provider is overloaded. */
  | 'overloaded'
  /** 408, 504, or the pool's socket timeout: no answer in time. */
  | 'upstream_timeout'
  /** 409, another 5xx, or a status that is neither success nor error. */
  | 'upstream_error'
  /** 400, 422: the provider refused the request itself. */
  | 'bad_request'
  /** 400 saying the prompt and output cap exceed the model's window: a larger window may take it. */
  | 'context_length_exceeded'
  /** 413. */
  | 'request_too_large'
  /** 401: the target's key is wrong or missing. */
  | 'unauthorized'
  /** 403: the key may not use this model or region. */
  | 'forbidden'
  /** 404: the model (or base URL) does not exist. */
  | 'model_not_found'
  /** Another 4xx. */
  | 'upstream_refused'
  /** A 2xx whose body is not the expected JSON. */
  | 'bad_response'
  /** A streamed answer that stopped before it was complete. */
  | 'stream_cut'
  /** No answer at all: refused, reset, DNS, TLS. */
  | 'unreachable'
  /** The request cannot be said in this provider's language (refused before sending). */
  | 'unsupported_request'
  /** What the target signs with (AWS keys, region) is not set: refused before sending. */
  | 'missing_credentials';

/** Which target failed, for the message: provider and model only, never its URL or key. */
export interface FailedTarget {
  readonly provider: string;
  readonly model: string;
}

/** A provider's answer that is not a success, as read off the wire. */
export interface ProviderErrorAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The body parsed as JSON; undefined when it was empty or not JSON. */
  readonly body: unknown;
}

export interface ProviderFailureOptions extends ResilienceErrorOptions {
  /** The status the provider answered, when it answered. */
  upstreamStatus?: number;
}

/** A ResilienceError from a provider, with its {@link ProviderFailureCode}. */
export class ProviderFailure extends ResilienceError {
  readonly code: ProviderFailureCode;
  readonly upstreamStatus: number | undefined;

  constructor(kind: ErrorKind, code: ProviderFailureCode, message: string, options: ProviderFailureOptions = {}) {
    super(kind, message, options);
    this.code = code;
    this.upstreamStatus = options.upstreamStatus;
  }

  /** Keeps the code: the route counts attempts after the provider failed. */
  override withAttempts(attempts: number): ProviderFailure {
    if (attempts === this.attempts) return this;
    return new ProviderFailure(this.kind, this.code, this.message, {
      attempts,
      retryAfterMs: this.retryAfterMs,
      status: this.status,
      cause: this.cause,
      upstreamStatus: this.upstreamStatus,
    });
  }
}

Object.defineProperty(ProviderFailure.prototype, 'name', { value: 'ProviderFailure' });

export function isProviderFailure(value: unknown): value is ProviderFailure {
  return value instanceof ProviderFailure;
}

/** 429 bodies that mean the account cannot pay, as OpenAI and Anthropic say it. */
function quotaExhausted(body: unknown): boolean {
  const error = errorObject(body);
  if (!error) return false;
  if (error.code === 'insufficient_quota' || error.type === 'insufficient_quota') return true;
  const details = error.details;
  return isObject(details) && details.error_code === 'enforced_spend_limit_reached';
}

/**
 * The error for a provider's answer that is not a success. Only the status and a few
 * machine-readable fields of the body are read: the message names the target and the status,
 * never the body, the URL or a key. Retry-After (OpenAI's `retry-after-ms` first) is kept on
 * retryable kinds only. A 2xx given here is one whose body was not the expected JSON.
 *
 * - 429 with the quota/spend exhausted, 402: `unavailable` (the next target at once)
 * - other 429, 408, 409, 5xx, 529: `transient` (retried on this target)
 * - 400, 413, 422: `invalid_request` (the request was refused); a 400 that says the context window
 *   is exceeded is `context_length_exceeded` ({@link contextExceeded})
 * - 401, 403, 404, any other 4xx: `unavailable` (the target's key, model or config is wrong)
 * - 1xx, 3xx (redirects are not followed), 2xx with a bad body: `transient`
 *
 * An AWS answer (Bedrock) names its error type in `x-amzn-errortype`; a few types say more than
 * their status (see {@link AWS_ERROR_TYPES}), the rest go by the status as above. The type, a
 * machine-readable name, is added to the message.
 *
 * @param nowMs epoch milliseconds, for a Retry-After given as an HTTP date
 */
export function providerStatusError(target: FailedTarget, answer: ProviderErrorAnswer, nowMs: number): ProviderFailure {
  const { status, headers, body } = answer;
  if (status >= 200 && status < 300) return malformedAnswerError(target, status);
  const answered = `target ${target.provider}/${target.model} answered ${status}`;
  const awsType = awsErrorType(headers);
  const named = awsType ? ` (${awsType})` : '';
  const fail = (kind: ErrorKind, code: ProviderFailureCode, reason: string, retryable = false) =>
    new ProviderFailure(kind, code, `${answered}: ${reason}${named}`, {
      upstreamStatus: status,
      retryAfterMs: retryable ? upstreamRetryAfterMs(headers, nowMs) : undefined,
    });

  const byType = awsType ? AWS_ERROR_TYPES.get(awsType) : undefined;
  if (byType) return fail(...byType);
  if (status === 429) {
    if (quotaExhausted(body)) return fail('unavailable', 'insufficient_quota', 'its quota is exhausted');
    return fail('transient', 'rate_limited', 'rate limited', true);
  }
  if (status === 402) return fail('unavailable', 'insufficient_quota', 'its billing refuses the request');
  if (status === 408 || status === 504) return fail('transient', 'upstream_timeout', 'it timed out', true);
  if (status === 503 || status === 529) return fail('transient', 'overloaded', 'it is overloaded', true);
  if (status === 409 || status >= 500) return fail('transient', 'upstream_error', 'it failed', true);
  if (status === 413) return fail('invalid_request', 'request_too_large', 'the request is too large');
  if (status === 400 && contextExceeded(body)) {
    return fail('invalid_request', 'context_length_exceeded', 'the prompt exceeds the context window');
  }
  if (status === 400 || status === 422) return fail('invalid_request', 'bad_request', 'it refused the request');
  if (status === 401) return fail('unavailable', 'unauthorized', 'its credentials were refused');
  if (status === 403) return fail('unavailable', 'forbidden', 'the credentials may not use it');
  if (status === 404) return fail('unavailable', 'model_not_found', 'the model or endpoint does not exist');
  if (status >= 400) return fail('unavailable', 'upstream_refused', 'it refused the target');
  return fail('transient', 'upstream_error', 'not a final answer (redirects are not followed)');
}

/**
 * AWS error types whose status alone would be read wrongly: the kind, code, reason and whether
 * Retry-After counts. Bedrock answers a model's own failure with 424 (another 4xx would be
 * `unavailable`), an exhausted account quota and a malformed signature with 400 (not the
 * caller's request at fault), bad or expired keys with 403 as it does a missing permission, and
 * a model still loading with 429 or 503 (overloaded, whichever it sends).
 */
const AWS_ERROR_TYPES: ReadonlyMap<string, [ErrorKind, ProviderFailureCode, string, boolean]> = new Map([
  ['ModelErrorException', ['transient', 'upstream_error', 'the model failed', true]],
  ['ModelStreamErrorException', ['transient', 'upstream_error', 'the model failed mid-stream', true]],
  ['ModelNotReadyException', ['transient', 'overloaded', 'the model is not ready', true]],
  ['ServiceQuotaExceededException', ['unavailable', 'insufficient_quota', 'its quota is exhausted', false]],
  ['UnrecognizedClientException', ['unavailable', 'unauthorized', 'its credentials were refused', false]],
  ['InvalidSignatureException', ['unavailable', 'unauthorized', 'its credentials were refused', false]],
  ['IncompleteSignatureException', ['unavailable', 'unauthorized', 'its credentials were refused', false]],
  ['ExpiredTokenException', ['unavailable', 'unauthorized', 'its credentials were refused', false]],
]);

/**
 * `x-amzn-errortype` without its namespace (`ThrottlingException:http://internal.amazon.com/…`),
 * when it looks like a type name: it goes into the message, so nothing else of it may.
 */
function awsErrorType(headers: IncomingHttpHeaders): string | undefined {
  const header = headers['x-amzn-errortype'];
  if (typeof header !== 'string') return undefined;
  const name = header.split(':', 1)[0].trim();
  return /^[A-Za-z]{1,64}$/.test(name) ? name : undefined;
}

/** A 2xx answer whose body is not the JSON the provider speaks: worth another try. */
export function malformedAnswerError(target: FailedTarget, status: number): ProviderFailure {
  return new ProviderFailure(
    'transient',
    'bad_response',
    `target ${target.provider}/${target.model} answered ${status} with an unreadable body`,
    { upstreamStatus: status },
  );
}

/**
 * A streamed answer that ended before the provider said it was complete (no `[DONE]`, no
 * `message_stop`): the connection closed early. Worth another try before anything was sent on.
 */
export function streamCutError(target: FailedTarget): ProviderFailure {
  return new ProviderFailure(
    'transient',
    'stream_cut',
    `target ${target.provider}/${target.model} ended its stream before the answer was complete`,
  );
}

/**
 * An error event inside a streamed answer (OpenAI's `{"error": …}` data, Anthropic's `error`
 * event): the provider failed mid-way. Its `type` decides like a status would; only the type is
 * read, never the message.
 */
export function streamErrorEvent(target: FailedTarget, error: unknown, nowMs: number): ProviderFailure {
  const type = isObject(error) && typeof error.type === 'string' ? error.type : '';
  const status = STREAM_ERROR_STATUSES.get(type) ?? 500;
  return providerStatusError(target, { status, headers: {}, body: { error } }, nowMs);
}

/** Error types streams name (Anthropic's, OpenAI's) as the status their answer would have had. */
const STREAM_ERROR_STATUSES: ReadonlyMap<string, number> = new Map([
  ['overloaded_error', 529],
  ['rate_limit_error', 429],
  ['api_error', 500],
  ['server_error', 500],
  ['invalid_request_error', 400],
  ['authentication_error', 401],
  ['permission_error', 403],
  ['not_found_error', 404],
  ['request_too_large', 413],
  ['timeout_error', 504],
]);

/** undici's own timeouts: the pool's `timeoutMs` passed before the headers, or between body chunks. */
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * The error for a request that got no whole answer: refused, reset, DNS, TLS, or the pool's
 * socket timeouts (`upstream_timeout`). Both are `transient`.
 */
export function networkError(target: FailedTarget, error: unknown): ProviderFailure {
  // Only a short error code, never the error's message: undici's names the address it dialled.
  const known = networkErrorCode(error);
  const reason = known ? ` (${known})` : '';
  const name = `target ${target.provider}/${target.model}`;
  if (known && TIMEOUT_CODES.has(known)) {
    return new ProviderFailure('transient', 'upstream_timeout', `${name} did not answer in time${reason}`, {
      cause: error,
    });
  }
  return new ProviderFailure('transient', 'unreachable', `${name} could not be reached${reason}`, { cause: error });
}

/**
 * A target whose signing material is not set, refused before anything is sent: `unavailable`, as
 * waiting does not set it. `missing` names what is absent (an environment variable's name), never
 * a value.
 */
export function missingCredentialsError(target: FailedTarget, missing: string): ProviderFailure {
  return new ProviderFailure(
    'unavailable',
    'missing_credentials',
    `target ${target.provider}/${target.model} cannot sign its requests: ${missing}`,
  );
}

/** A request this provider cannot carry out as asked; refused before anything is sent. */
export function unsupportedRequestError(target: FailedTarget, reason: string): ProviderFailure {
  return new ProviderFailure(
    'invalid_request',
    'unsupported_request',
    `target ${target.provider}/${target.model} cannot take this request: ${reason}`,
  );
}

/**
 * What Anthropic says, in its message only: "prompt is too long: 208310 tokens > 200000 maximum",
 * "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000"; Bedrock:
 * "Input is too long for requested model". Read to decide, never repeated.
 */
const CONTEXT_EXCEEDED_MESSAGE = /prompt is too long|exceed context limit|input is too long/i;

/**
 * Whether a 400's body says the request does not fit the model's context window: OpenAI's
 * `code: context_length_exceeded`, or Anthropic's `invalid_request_error` (and Bedrock's
 * `ValidationException`) whose message says so. One mapping for every wire.
 */
function contextExceeded(body: unknown): boolean {
  const error = errorObject(body);
  if (error?.code === 'context_length_exceeded') return true;
  const message = error?.message ?? (isObject(body) ? body.message : undefined);
  return typeof message === 'string' && CONTEXT_EXCEEDED_MESSAGE.test(message.slice(0, 200));
}

function errorObject(body: unknown): Record<string, unknown> | undefined {
  if (!isObject(body)) return undefined;
  return isObject(body.error) ? body.error : undefined;
}
