import { isResilienceError, unreachableError } from '../common';

/**
 * What an outbound request's failure is to the caller: an upstream that cannot be reached (DNS,
 * refused, reset, TLS, a timeout) is `transient` (502 on a route, a failure to its breaker, worth
 * a retry), named by `upstream` and its error's code, never the socket's message; a request that
 * was stopped (`stopped`), one already failed in Bulkhead's terms (egress denied), and one that was never
 * valid are as they are. One rule for every client a company's code is given: `TenantHttpClient`
 * and a tool's `ctx.http`.
 */
export function outboundFailure(error: unknown, stopped: boolean, upstream: string): unknown {
  if (stopped || isResilienceError(error) || !isNetworkError(error)) return error;
  return unreachableError(upstream, error);
}

/** A socket's or undici's error (ENOTFOUND, ECONNREFUSED, UND_ERR_HEADERS_TIMEOUT...), not a request that was never valid. */
function isNetworkError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code !== 'UND_ERR_INVALID_ARG' && /^(E|UND_ERR_)/.test(code);
}
