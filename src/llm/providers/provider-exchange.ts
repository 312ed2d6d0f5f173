import { type Clock, isResilienceError } from '../../common';
import type { ProviderAttempt } from './llm-provider';
import { malformedAnswerError, providerStatusError, networkError } from './provider-errors';

/**
 * The most a provider's answer may be. A non-streamed completion is bounded by its output cap;
 * 8 MiB holds a million tokens of text with room for JSON escapes, and stops a runaway body.
 */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/**
 * POSTs `body` as JSON to `url` through the attempt's pool with exactly `headers` (nothing of
 * the caller's), and answers the parsed JSON of a 2xx. Anything else is thrown as the kind the
 * route acts on: the attempt's abort reason when it was stopped, the pool's own errors
 * (egress_denied, a too-large body) as they are, network failures as `transient`, and
 * non-2xx answers and unreadable 2xx bodies through {@link providerStatusError}.
 */
export async function postJson(
  attempt: ProviderAttempt,
  url: string,
  headers: Record<string, string>,
  body: unknown,
  clock: Clock,
): Promise<unknown> {
  const { target } = attempt;
  let response;
  try {
    // No signal handed over: the attempt's client stops the request with the attempt's own
    // cancellation, without an AbortSignal made for every request.
    response = await attempt.http.request(url, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      maxResponseBytes: MAX_ANSWER_BYTES,
      timeoutMs: attempt.timeoutMs,
    });
  } catch (error) {
    const { signal } = attempt;
    if (signal.aborted) throw signal.reason;
    if (isResilienceError(error)) throw error;
    throw networkError(target, error);
  }
  const { statusCode, headers: answerHeaders } = response;
  const parsed = parseJson(response.body);
  if (statusCode < 200 || statusCode >= 300) {
    throw providerStatusError(target, { status: statusCode, headers: answerHeaders, body: parsed }, clock.wallNow());
  }
  if (parsed === undefined) throw malformedAnswerError(target, statusCode);
  return parsed;
}

function parseJson(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** `path` under a base URL that may or may not end in a slash (`…/v1`, `…/v1/`). */
export function endpointUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/${path}`;
}
