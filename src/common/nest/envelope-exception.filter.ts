import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger, Optional } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { CLIENT_CLOSED, type CallState, existingCallState } from './call-state';
import { anthropicStatus, toAnthropicError } from '../errors/anthropic-error';
import { errorWireOf, retryAfterHeaders, toEnvelope, toJsonRpcEnvelope } from '../errors/envelope';
import { fromHttpException } from './http-exception-mapping';
import { wasReported } from '../errors/reported-failures';
import { asResilienceError, type ResilienceError } from '../errors/resilience-error';
import { logRefusal } from './refusal-log';
import { logIfUnexpected } from './unexpected-errors';
import { AppPlatform, type HttpPlatform, type PlatformReply, type PlatformRequest } from './platform';

/**
 * Turns every failure of every HTTP route into the error envelope: our ResilienceErrors,
 * Nest's and Fastify's own HttpExceptions (unknown route, malformed JSON, wrong content type,
 * body over the limit), a company's own HttpExceptions, and anything unexpected as `internal`.
 * A wait goes out as `Retry-After` and `retry-after-ms`; a path under `/v1/` gets OpenAI's
 * error fields too, an Anthropic client's request Anthropic's shape, and `/mcp` the envelope as a
 * JSON-RPC error (docs/http-contract.md section 6). On Fastify and Express alike, through the
 * app's {@link HttpPlatform}.
 */
@Catch()
export class EnvelopeExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Bulkhead');
  private readonly platform: AppPlatform;

  // Optional: a filter built by hand (`new EnvelopeExceptionFilter()`) tells the platform by the reply.
  constructor(@Optional() adapterHost?: HttpAdapterHost) {
    this.platform = new AppPlatform(adapterHost);
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    const http = host.switchToHttp();
    const request = http.getRequest<PlatformRequest>();
    const reply = http.getResponse<PlatformReply>();
    const platform = this.platform.of(reply);
    const error = this.toResilienceError(exception);
    if (platform.isSent(reply)) return;
    const state = existingCallState(request);
    if (error.retryAfterMs !== undefined) {
      for (const [name, value] of Object.entries(retryAfterHeaders(error.retryAfterMs))) {
        platform.setHeader(reply, name, value);
      }
    }
    // Every path under /v1/ is where an OpenAI or Anthropic SDK pointed at the service calls, known route or not.
    const wire = state?.errorWire ?? errorWireOf(platform.url(request), request.headers['anthropic-version']);
    const labels = { callId: state?.callId, toolId: state?.toolId, openai: wire === 'openai' };
    if (wire === 'anthropic') platform.sendJson(reply, anthropicStatus(error), toAnthropicError(error, labels));
    else if (wire === 'jsonrpc') platform.sendJson(reply, error.status, toJsonRpcEnvelope(error, labels));
    else platform.sendJson(reply, error.status, toEnvelope(error, labels));
    // A call's own failure has its line already; a request refused before its call began gets one here.
    if (!wasReported(error)) this.logRefusal(platform, request, reply, state, error);
  }

  private logRefusal(
    platform: HttpPlatform,
    request: PlatformRequest,
    reply: PlatformReply,
    state: CallState | undefined,
    error: ResilienceError,
  ) {
    // The route's pattern, never the URL: a path or query string is the caller's text.
    const pattern = platform.routePattern(request);
    const elapsedMs = platform.elapsedMs(reply);
    const refusal = {
      callId: state?.callId,
      tenant: state?.tenant,
      tool: state?.toolId,
      pool: state?.pool,
      durationMs: elapsedMs === undefined ? undefined : Math.round(elapsedMs * 10) / 10,
      route: pattern === undefined ? undefined : `${platform.rawRequest(request).method} ${pattern}`,
    };
    logRefusal(this.logger, error, refusal, pattern !== undefined);
  }

  private toResilienceError(exception: unknown): ResilienceError {
    // The client went away while its body was being read: it left, nothing broke.
    if (isRequestAborted(exception)) return CLIENT_CLOSED;
    const error = exception instanceof HttpException ? fromHttpException(exception) : asResilienceError(exception);
    logIfUnexpected(this.logger, error);
    return error;
  }
}

/**
 * Node's error for a request body cut short by its client (`abortIncoming`: the socket closed
 * before the body's end), as Fastify's body reader passes it on.
 */
function isRequestAborted(exception: unknown): boolean {
  // Read by shape: Node's own errors need not be this realm's `Error` (a test's VM context).
  const { code, message } = (exception ?? {}) as { code?: unknown; message?: unknown };
  return code === 'ECONNRESET' && message === 'aborted';
}
