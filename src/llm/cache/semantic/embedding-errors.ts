import { ResilienceError } from '../../../common';

/** undici's socket timeouts: the endpoint was reached (or dialled) and did not answer in time. */
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * The error for an embeddings endpoint's answer that is not a success. The message names the
 * embedder and the status, never the body (it may quote the input) or the key.
 *
 * - 408, 409, 429, 5xx: `transient` (it may answer next time)
 * - any other status: `unavailable` (the key, model or URL is wrong: waiting will not fix it)
 */
export function embeddingStatusError(embedder: string, status: number): ResilienceError {
  const answered = `embedder ${embedder} answered ${status}`;
  if (status === 408 || status === 409 || status === 429 || status >= 500) {
    return new ResilienceError('transient', answered);
  }
  return new ResilienceError('unavailable', `${answered}: check its key, model and base URL`);
}

/** A 2xx whose body is not the embeddings asked for. */
export function malformedEmbeddingsError(embedder: string, reason: string): ResilienceError {
  return new ResilienceError('transient', `embedder ${embedder} answered with no usable embeddings: ${reason}`);
}

/**
 * A request that got no answer: refused, reset, DNS, TLS, or the pool's socket timeouts
 * (`timeout`). Only a short error code goes into the message: undici's own message names the
 * address it dialled.
 */
export function embeddingNetworkError(embedder: string, error: unknown): ResilienceError {
  const code = (error as { code?: unknown } | null)?.code;
  const known = typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? code : undefined;
  const reason = known ? ` (${known})` : '';
  if (known && TIMEOUT_CODES.has(known)) {
    return new ResilienceError('timeout', `embedder ${embedder} did not answer in time${reason}`, { cause: error });
  }
  return new ResilienceError('transient', `embedder ${embedder} could not be reached${reason}`, { cause: error });
}

/** The embedder's own deadline passed. */
export function embeddingTimeoutError(embedder: string, timeoutMs: number): ResilienceError {
  return new ResilienceError('timeout', `embedder ${embedder} did not answer within ${timeoutMs} ms`);
}
