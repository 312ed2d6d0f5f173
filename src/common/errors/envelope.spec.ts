import { isOpenAiPath, retryAfterHeaders, toEnvelope, toJsonRpcEnvelope } from './envelope';
import { ResilienceError } from './resilience-error';

describe('retryAfterHeaders', () => {
  it.each<[number, string, string]>([
    [1_000, '1', '1000'],
    [59_750, '60', '59750'],
    [60_000, '60', '60000'],
    [90_500, '91', '90500'],
  ])('gives %p ms as Retry-After %s (whole seconds, rounded up) and retry-after-ms %s', (ms, seconds, millis) => {
    expect(retryAfterHeaders(ms)).toEqual({ 'retry-after': seconds, 'retry-after-ms': millis });
  });

  it('rounds fractional milliseconds up, so a client never comes back too early', () => {
    expect(retryAfterHeaders(1_234.2)).toEqual({ 'retry-after': '2', 'retry-after-ms': '1235' });
    expect(retryAfterHeaders(0.3)).toEqual({ 'retry-after': '1', 'retry-after-ms': '1' });
  });

  it('says at least 1 second in Retry-After, and the wait itself in retry-after-ms', () => {
    expect(retryAfterHeaders(0)).toEqual({ 'retry-after': '1', 'retry-after-ms': '0' });
  });
});

describe('isOpenAiPath', () => {
  it.each([
    '/v1/models',
    '/v1/chat/completions',
    '/v1/tools/echo/invoke',
    '/v1/tools/batch?x=1',
    '/v1/events?limit=0',
    '/v1/admin/budgets/acme',
    '/v1/',
  ])('is true for %s', (url) => {
    expect(isOpenAiPath(url)).toBe(true);
  });

  it.each(['/v1', '/v1?limit=1', '/v1x/models', '/V1/models', '/health/ready', '/metrics', '/mcp', '/', '/docs'])(
    'is false for %s',
    (url) => {
      expect(isOpenAiPath(url)).toBe(false);
    },
  );

  it('is false without a URL', () => {
    expect(isOpenAiPath(undefined)).toBe(false);
  });
});

describe('toEnvelope with openai', () => {
  it('adds type and code (the kind) and param (null) beside the envelope’s own fields', () => {
    const error = new ResilienceError('rate_limited', 'slow down', { retryAfterMs: 1_500 });

    expect(toEnvelope(error, { openai: true, callId: 'c-1' })).toEqual({
      error: {
        kind: 'rate_limited',
        message: 'slow down',
        attempts: 0,
        jsonrpcCode: -32005,
        retryAfterMs: 1_500,
        type: 'rate_limited',
        code: 'rate_limited',
        param: null,
      },
      callId: 'c-1',
    });
  });

  it("uses OpenAI's own code and param where the failure names them, the kind staying the type", () => {
    const error = new ResilienceError('invalid_request', "Previous response with id 'resp_1' not found.", {
      openai: { code: 'previous_response_not_found', param: 'previous_response_id' },
    });

    expect(toEnvelope(error, { openai: true }).error).toMatchObject({
      kind: 'invalid_request',
      type: 'invalid_request',
      code: 'previous_response_not_found',
      param: 'previous_response_id',
    });
    expect(toEnvelope(error.withAttempts(2), { openai: true }).error.code).toBe('previous_response_not_found');
  });

  it('adds none of them otherwise', () => {
    expect(Object.keys(toEnvelope(new ResilienceError('not_found', 'no such route')).error).sort()).toEqual([
      'attempts',
      'jsonrpcCode',
      'kind',
      'message',
    ]);
  });
});

describe('toJsonRpcEnvelope', () => {
  it('is a JSON-RPC error response without id that is also the envelope', () => {
    const error = new ResilienceError('invalid_request', 'not from this page', { status: 403 });

    expect(toJsonRpcEnvelope(error, { openai: true })).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, kind: 'invalid_request', message: 'not from this page', attempts: 0, jsonrpcCode: -32600 },
    });
  });
});
