import { type Clock, isResilienceError, ResilienceError } from '../../common';
import type { HttpToolConfig } from '../../config';
import type { ToolArguments, ToolContext } from '../tool';
import { parseRetryAfter, upstreamNetworkError, upstreamStatusError } from '../upstream-errors';

/**
 * A tool that sends its arguments as JSON to a fixed URL and answers with the JSON (or text)
 * the upstream returns, through the call's HTTP pool (`ctx.http`). Redirects are not followed.
 */
export function httpTool(toolId: string, config: HttpToolConfig, clock: Clock) {
  const fixedHeaders = { ...config.headers, 'content-type': 'application/json', accept: 'application/json' };
  // The config cannot name the headers set here (its schema refuses them, in any letter case).
  return async (args: ToolArguments, context: ToolContext): Promise<unknown> => {
    let response;
    try {
      // No signal: ctx.http stops the request with the attempt, without making an AbortSignal.
      response = await context.http.request(config.url, {
        method: config.method,
        headers: withIdempotencyKey({ ...fixedHeaders, 'x-call-id': context.callId }, context.idempotencyKey),
        body: JSON.stringify(args),
        maxResponseBytes: config.maxResponseBytes,
      });
    } catch (error) {
      const { signal } = context;
      if (signal.aborted) throw signal.reason;
      if (isResilienceError(error)) throw error;
      throw upstreamNetworkError(toolId, error);
    }
    const { statusCode, headers, body } = response;
    if (statusCode < 200 || statusCode >= 300)
      throw upstreamStatusError(toolId, statusCode, parseRetryAfter(headers['retry-after'], clock.wallNow()));
    return decode(toolId, body, headers['content-type']);
  };
}

/** The scoped key goes upstream, the same on every retry, so an upstream that de-duplicates can. */
function withIdempotencyKey(headers: Record<string, string>, key: string | undefined): Record<string, string> {
  if (key !== undefined) headers['idempotency-key'] = key;
  return headers;
}

function decode(toolId: string, body: Buffer, contentType: string | undefined): unknown {
  if (body.length === 0) return null;
  const text = body.toString('utf8');
  if (!contentType || !/[/+]json\b/i.test(contentType)) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ResilienceError('transient', `upstream of tool '${toolId}' answered malformed JSON`);
  }
}
