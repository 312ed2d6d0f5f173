import { ResilienceError } from './resilience-error';

/** The longest Retry-After read from an upstream: a day. */
const MAX_RETRY_AFTER_MS = 86_400_000;

/** The three HTTP-date forms of RFC 9110: IMF-fixdate, RFC 850 and asctime. */
const HTTP_DATE = [
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/,
  /^(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \d{2}-(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)-\d{2} \d{2}:\d{2}:\d{2} GMT$/,
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/,
];

/**
 * An upstream's `Retry-After` (delay-seconds or an HTTP date) in milliseconds from `nowMs`
 * (epoch). Undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
  // Date.parse reads almost anything ('soon 2099'); only real HTTP-dates count.
  if (!HTTP_DATE.some((form) => form.test(text))) return undefined;
  const date = Date.parse(/GMT$/.test(text) ? text : `${text} GMT`);
  if (Number.isNaN(date)) return undefined;
  return Math.min(Math.max(0, date - nowMs), MAX_RETRY_AFTER_MS);
}

/**
 * An upstream's wait before the next request, in milliseconds: `retry-after-ms` (OpenAI's,
 * fractional milliseconds, which agent SDKs read first) when readable, else `Retry-After`
 * (seconds or an HTTP date, from `nowMs`, epoch). Undefined when neither is readable.
 */
export function upstreamRetryAfterMs(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  nowMs: number,
): number | undefined {
  const precise = headers['retry-after-ms'];
  if (typeof precise === 'string' && /^\d+(\.\d+)?$/.test(precise.trim())) {
    return Math.min(Math.ceil(Number(precise.trim())), MAX_RETRY_AFTER_MS);
  }
  return parseRetryAfter(headers['retry-after'], nowMs);
}

/**
 * The error's short code (`ECONNREFUSED`, `UND_ERR_HEADERS_TIMEOUT`) when it has one, for a
 * message: never the error's own message, which names the address it dialled.
 */
export function networkErrorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? code : undefined;
}

/**
 * The error for an upstream's non-2xx answer. Its body is never read into the message:
 * 5xx, 408 and 429 are `transient` (with its Retry-After), 404 `not_found`, another 4xx
 * `schema` (the upstream refused these arguments), and anything else `transient`.
 */
export function upstreamStatusError(
  toolId: string,
  statusCode: number,
  retryAfterMs: number | undefined,
): ResilienceError {
  const answered = `upstream of tool '${toolId}' answered HTTP ${statusCode}`;
  if (statusCode >= 500 || statusCode === 408 || statusCode === 429) {
    return new ResilienceError('transient', answered, { retryAfterMs });
  }
  if (statusCode === 404) return new ResilienceError('not_found', answered);
  if (statusCode >= 400) return new ResilienceError('schema', `${answered}: it refused the arguments`);
  return new ResilienceError('transient', `${answered}, which is not followed`);
}

/** The error for a request that never got an answer: refused, reset, DNS, TLS, socket errors. */
export function upstreamNetworkError(toolId: string, error: unknown): ResilienceError {
  return unreachableError(`upstream of tool '${toolId}'`, error);
}

/** {@link upstreamNetworkError} for any upstream, named by `upstream`; the error's code, never its message. */
export function unreachableError(upstream: string, error: unknown): ResilienceError {
  const code = networkErrorCode(error);
  const reason = code ? ` (${code})` : '';
  return new ResilienceError('transient', `${upstream} could not be reached${reason}`, { cause: error });
}
