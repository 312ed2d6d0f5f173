import {
  type Clock,
  isResilienceError,
  parseRetryAfter,
  ResilienceError,
  upstreamNetworkError,
  upstreamStatusError,
} from '../../../common';
import type { HttpToolConfig } from './http.options';
import type { ToolArguments, ToolContext } from '../../tool';
import { toolAnswerOf } from './http-tool-answer';

/**
 * A tool that sends its arguments as JSON to a fixed URL and answers with the JSON (or text)
 * the upstream returns, through the call's HTTP pool (`ctx.http`). Redirects are not followed.
 *
 * Only a request that left can fail because of the upstream (`transient`, retried, counted by
 * the breaker). One that could not even be built (arguments JSON cannot encode, a header the
 * client refuses) reached nobody, so it is answered as the caller's error, never retried.
 */
export function httpTool(toolId: string, config: HttpToolConfig, clock: Clock) {
  // The config schema checks the URL; a tool built from anywhere else fails here, at start-up.
  if (!URL.canParse(config.url)) throw new RangeError(`tool '${toolId}' has an invalid url`);
  const fixedHeaders = { ...config.headers, 'content-type': 'application/json', accept: 'application/json' };
  // The config cannot name the headers set here (its schema refuses them, in any letter case).
  return async (args: ToolArguments, context: ToolContext): Promise<unknown> => {
    const body = encodeArguments(toolId, args);
    let response;
    try {
      // No signal: ctx.http stops the request with the attempt, without making an AbortSignal.
      response = await context.http.request(config.url, {
        method: config.method,
        headers: withIdempotencyKey({ ...fixedHeaders, 'x-call-id': context.callId }, context.idempotencyKey),
        body,
        maxResponseBytes: config.maxResponseBytes,
      });
    } catch (error) {
      const { signal } = context;
      if (signal.aborted) throw signal.reason;
      if (isResilienceError(error)) throw error;
      if (isRefusedBeforeSending(error)) {
        throw new ResilienceError('invalid_request', `the request of tool '${toolId}' could not be built`, {
          cause: error,
        });
      }
      throw upstreamNetworkError(toolId, error);
    }
    const { statusCode, headers, body: answer } = response;
    if (statusCode < 200 || statusCode >= 300)
      throw upstreamStatusError(toolId, statusCode, parseRetryAfter(headers['retry-after'], clock.wallNow()));
    return toolAnswerOf(toolId, answer, headers['content-type']);
  };
}

/**
 * The arguments as the request body. What JSON cannot encode (a BigInt, a cycle, nesting deeper
 * than `JSON.stringify` can walk, which only code that bypasses the request body's depth limit
 * can hand over) is the caller's `schema` error: nothing was sent.
 */
function encodeArguments(toolId: string, args: ToolArguments): string {
  let body: string | undefined;
  try {
    body = JSON.stringify(args);
  } catch (error) {
    throw new ResilienceError('schema', `arguments of tool '${toolId}' cannot be sent as JSON`, { cause: error });
  }
  // A `toJSON` answering undefined would send an empty body.
  if (body === undefined) throw new ResilienceError('schema', `arguments of tool '${toolId}' cannot be sent as JSON`);
  return body;
}

/**
 * undici validates a request (method, path, headers, body) before it writes a byte, and refuses
 * an invalid one with `UND_ERR_INVALID_ARG`: a config header value it cannot send (a non-Latin-1
 * or control character) is refused there on every call, and must not open the breaker.
 */
function isRefusedBeforeSending(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'UND_ERR_INVALID_ARG';
}

/** The scoped key goes upstream, the same on every retry, so an upstream that de-duplicates can. */
function withIdempotencyKey(headers: Record<string, string>, key: string | undefined): Record<string, string> {
  if (key !== undefined) headers['idempotency-key'] = key;
  return headers;
}
