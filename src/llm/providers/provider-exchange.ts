import type { Readable } from 'node:stream';
import { type Clock, isResilienceError } from '../../common';
import type { HttpResponse } from '../../containment';
import type { AttemptChannel, ProviderAttempt } from './llm-provider';
import {
  malformedAnswerError,
  networkError,
  type ProviderErrorAnswer,
  type ProviderFailure,
  providerStatusError,
} from './provider-errors';
import { type SseEvent, SseEventTooLarge, sseEvents } from '../wire';

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
 * non-2xx answers and unreadable 2xx bodies through {@link providerStatusError}, unless
 * `refusal` names a non-2xx answer otherwise (a refusal only that endpoint answers).
 */
export async function postJson(
  attempt: AttemptChannel,
  url: string,
  headers: Record<string, string>,
  body: unknown,
  clock: Clock,
  options: PostOptions = {},
): Promise<unknown> {
  return (await postJsonAnswer(attempt, url, headers, body, clock, options)).body;
}

/** What an endpoint asks of {@link postJson} beyond the defaults. */
export interface PostOptions {
  /** Names a non-2xx answer otherwise than {@link providerStatusError}: a refusal only that endpoint answers. */
  refusal?: (answer: ProviderErrorAnswer) => ProviderFailure | undefined;
  /** The largest answer read (default {@link MAX_ANSWER_BYTES}). */
  maxResponseBytes?: number;
}

/** {@link postJson} with the answer's headers beside its body, for a provider that reads one (Bedrock's token counts). */
export async function postJsonAnswer(
  attempt: AttemptChannel,
  url: string,
  headers: Record<string, string>,
  body: unknown,
  clock: Clock,
  { refusal, maxResponseBytes = MAX_ANSWER_BYTES }: PostOptions = {},
): Promise<{ body: unknown; headers: HttpResponse['headers'] }> {
  const { target } = attempt;
  let response;
  try {
    // No signal handed over: the attempt's client stops the request with the attempt's own
    // cancellation, without an AbortSignal made for every request.
    response = await attempt.http.request(url, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      maxResponseBytes,
      timeoutMs: attempt.timeoutMs,
    });
  } catch (error) {
    throw stoppedOr(attempt, error);
  }
  const { statusCode, headers: answerHeaders } = response;
  const parsed = parseJson(response.body);
  if (statusCode < 200 || statusCode >= 300) {
    const answer = { status: statusCode, headers: answerHeaders, body: parsed };
    throw refusal?.(answer) ?? providerStatusError(target, answer, clock.wallNow());
  }
  if (parsed === undefined) throw malformedAnswerError(target, statusCode);
  return { body: parsed, headers: answerHeaders };
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

/** The most of an error answer read from a streaming request: its JSON error, not a runaway body. */
const MAX_STREAM_ERROR_BYTES = 64 * 1024;

/**
 * {@link postJson} for a streamed answer: the body of a 2xx is handed back as it arrives (read
 * it with {@link providerEvents}); anything else fails as {@link postJson} would, its error
 * answer read whole (at most 64 KiB).
 */
export async function postStream(
  attempt: ProviderAttempt,
  url: string,
  headers: Record<string, string>,
  body: unknown,
  clock: Clock,
): Promise<Readable> {
  const { target } = attempt;
  let response;
  try {
    response = await attempt.http.stream(url, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      timeoutMs: attempt.timeoutMs,
    });
  } catch (error) {
    throw stoppedOr(attempt, error);
  }
  const { statusCode, headers: answerHeaders, body: answer } = response;
  if (statusCode >= 200 && statusCode < 300) return answer;
  let text: Buffer;
  try {
    text = await readAtMost(answer, MAX_STREAM_ERROR_BYTES);
  } catch (error) {
    throw stoppedOr(attempt, error);
  }
  throw providerStatusError(
    target,
    { status: statusCode, headers: answerHeaders, body: parseJson(text) },
    clock.wallNow(),
  );
}

/**
 * The server-sent events of a streamed answer. The stream failing mid-way reads as the attempt's
 * abort reason when it was stopped, else `transient` (reset, the pool's idle timeout); an event
 * past the size limit as a malformed answer.
 */
export async function* providerEvents(attempt: ProviderAttempt, body: Readable): AsyncGenerator<SseEvent> {
  try {
    yield* sseEvents(body);
  } catch (error) {
    if (error instanceof SseEventTooLarge) throw malformedAnswerError(attempt.target, 200);
    throw stoppedOr(attempt, error);
  } finally {
    // A reader that stopped early (the route moved on) lets the connection go at once.
    body.destroy();
  }
}

/** The attempt's abort reason when it was stopped; the pool's own errors as they are; else `transient`. */
export function stoppedOr(attempt: AttemptChannel, error: unknown): unknown {
  const { signal } = attempt;
  if (signal.aborted) return signal.reason;
  if (isResilienceError(error)) return error;
  return networkError(attempt.target, error);
}

async function readAtMost(body: Readable, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= limit) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, limit);
}
