import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ResilienceError } from '../../../common';
import { UpstreamAnswerEnded, UpstreamAnswerTooLarge } from '../../../mcp-client';
import { mcpCallError, mcpToolError } from './mcp-call-errors';

describe('mcpCallError', () => {
  it('passes Bulkhead’s own refusals on as they are', () => {
    const denied = new ResilienceError('egress_denied', 'not allowed');

    expect(mcpCallError('t', denied)).toBe(denied);
  });

  it.each([
    [500, 'transient', "upstream of tool 't' answered HTTP 500"],
    [503, 'transient', "upstream of tool 't' answered HTTP 503"],
    [429, 'transient', "upstream of tool 't' answered HTTP 429"],
    [404, 'not_found', "upstream of tool 't' answered HTTP 404"],
    [401, 'schema', "upstream of tool 't' answered HTTP 401: it refused the arguments"],
  ])('maps an HTTP %i of the transport as an http tool’s answer (%s)', (status, kind, message) => {
    const error = mcpCallError('t', new StreamableHTTPError(status, 'Error POSTing to endpoint: secret body'));

    expect(error).toMatchObject({ kind, message });
  });

  it('maps an answer of a content type MCP does not use as transient', () => {
    expect(mcpCallError('t', new StreamableHTTPError(-1, 'Unexpected content type: text/html'))).toMatchObject({
      kind: 'transient',
      message: "upstream of tool 't' answered in a form MCP does not use",
    });
  });

  it.each([
    [ErrorCode.InvalidParams, 'schema'],
    [ErrorCode.MethodNotFound, 'not_found'],
    [ErrorCode.RequestTimeout, 'timeout'],
    [ErrorCode.ConnectionClosed, 'transient'],
    [ErrorCode.InternalError, 'transient'],
    [-32099, 'transient'],
  ])('maps JSON-RPC error %i to %s', (code, kind) => {
    expect(mcpCallError('t', new McpError(code, 'trouble')).kind).toBe(kind);
  });

  it('keeps the upstream’s words of an invalid-params error, clipped', () => {
    const error = mcpCallError('t', new McpError(ErrorCode.InvalidParams, 'x'.repeat(5_000)));

    expect(error.message.startsWith("upstream of tool 't' refused the arguments: MCP error -32602: xxx")).toBe(true);
    expect(error.message.length).toBeLessThan(1_100);
  });

  it.each([
    [new UpstreamAnswerTooLarge(100), "upstream of tool 't' answered more than 100 bytes"],
    [new UpstreamAnswerEnded(), "upstream of tool 't' ended its answer before the result"],
    [
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      "upstream of tool 't' could not be reached (ECONNREFUSED)",
    ],
    [
      Object.assign(new Error('bad result'), { name: 'ZodError' }),
      "upstream of tool 't' answered a result MCP does not allow",
    ],
  ])('maps %p as transient', (cause, message) => {
    expect(mcpCallError('t', cause)).toMatchObject({ kind: 'transient', message });
  });

  it('answers a header undici will not send as the request’s own error, never the upstream’s', () => {
    const error = mcpCallError('t', Object.assign(new Error('invalid header'), { code: 'UND_ERR_INVALID_ARG' }));

    expect(error).toMatchObject({ kind: 'invalid_request', message: "the request of tool 't' could not be built" });
  });
});

describe('mcpToolError', () => {
  const FAILURE = { isError: 'failure', retryIsError: false } as const;
  const RETRIED = { isError: 'failure', retryIsError: true } as const;
  const BAD_INPUT = { isError: 'bad_input', retryIsError: false } as const;
  const result = {
    isError: true,
    content: [
      { type: 'text' as const, text: 'backend unreachable' },
      { type: 'image' as const, data: 'AAAA', mimeType: 'image/png' },
      { type: 'text' as const, text: 'try again later' },
    ],
  };

  it('is by default the upstream’s failure: transient (502, counted by the breaker), not retried, with its text', () => {
    const error = mcpToolError('t', result, FAILURE);

    expect(error).toMatchObject({
      kind: 'transient',
      status: 502,
      retryable: false,
      message: "the upstream tool of 't' answered an error: backend unreachable\ntry again later",
    });
    expect(error.withAttempts(1).retryable).toBe(false);
  });

  it('is retried as any transient failure when the tool’s config says so', () => {
    expect(mcpToolError('t', result, RETRIED)).toMatchObject({ kind: 'transient', status: 502, retryable: true });
  });

  it('is the caller’s bad input when the tool’s config says its server means that: schema, with its text', () => {
    expect(mcpToolError('t', result, BAD_INPUT)).toMatchObject({
      kind: 'schema',
      status: 400,
      message: "the upstream tool of 't' answered an error: backend unreachable\ntry again later",
    });
  });

  it.each([FAILURE, BAD_INPUT])('clips the upstream’s text (%p)', (rule) => {
    const error = mcpToolError('t', { isError: true, content: [{ type: 'text', text: 'x'.repeat(5_000) }] }, rule);

    expect(error.message).toBe(`the upstream tool of 't' answered an error: ${'x'.repeat(1_000)}…`);
  });

  it('says so without a colon when the result has no text', () => {
    expect(mcpToolError('t', { isError: true, content: [] }, FAILURE).message).toBe(
      "the upstream tool of 't' answered an error",
    );
  });
});
