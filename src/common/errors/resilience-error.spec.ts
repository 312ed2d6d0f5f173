import { toEnvelope } from './envelope';
import { ERROR_KINDS, type ErrorKind } from './error-kinds';
import { isResilienceError, ResilienceError } from './resilience-error';

/** The table of docs/http-contract.md section 6, written out here so the code cannot grade itself. */
const CONTRACT: Array<[ErrorKind, number, number]> = [
  ['invalid_request', 400, -32600],
  ['schema', 400, -32602],
  ['unauthorized', 401, -32001],
  ['budget_exceeded', 402, -32003],
  ['contained', 403, -32002],
  ['egress_denied', 403, -32013],
  ['not_found', 404, -32601],
  ['tool_changed', 409, -32014],
  ['idempotency_conflict', 422, -32004],
  ['rate_limited', 429, -32005],
  ['queue_full', 503, -32006],
  ['queue_expired', 503, -32007],
  ['circuit_open', 503, -32008],
  ['stopped', 503, -32009],
  ['unavailable', 503, -32012],
  ['overloaded', 503, -32015],
  ['timeout', 504, -32010],
  ['transient', 502, -32011],
  ['internal', 500, -32603],
];

describe('ResilienceError', () => {
  it('knows exactly the kinds of the contract', () => {
    expect(Object.keys(ERROR_KINDS).sort()).toEqual(CONTRACT.map(([kind]) => kind).sort());
  });

  it.each(CONTRACT)('gives %s the HTTP status %d and the JSON-RPC code %d', (kind, status, jsonrpcCode) => {
    const error = new ResilienceError(kind, 'message');
    expect(error.kind).toBe(kind);
    expect(error.status).toBe(status);
    expect(error.jsonrpcCode).toBe(jsonrpcCode);
  });

  it('takes an HTTP status the contract names instead of the one of its kind (413 for an over-limit body)', () => {
    const error = new ResilienceError('invalid_request', 'request body is larger than the limit', { status: 413 });
    expect(error.status).toBe(413);
    expect(error.kind).toBe('invalid_request');
    expect(error.jsonrpcCode).toBe(-32600);
  });

  it('defaults to 0 attempts and no retry-after', () => {
    const error = new ResilienceError('queue_full', 'full');
    expect(error.attempts).toBe(0);
    expect(error.retryAfterMs).toBeUndefined();
    expect(error.cause).toBeUndefined();
    expect('cause' in error).toBe(false);
  });

  it('keeps its message, attempts, retry-after and cause', () => {
    const cause = new Error('upstream said 503');
    const error = new ResilienceError('transient', 'upstream failed', { attempts: 3, retryAfterMs: 1500, cause });
    expect(error.message).toBe('upstream failed');
    expect(error.attempts).toBe(3);
    expect(error.retryAfterMs).toBe(1500);
    expect(error.cause).toBe(cause);
  });

  it('is an Error named ResilienceError', () => {
    const error = new ResilienceError('timeout', 'too slow');
    expect(error).toBeInstanceOf(Error);
    expect(error).toBeInstanceOf(ResilienceError);
    expect(error.name).toBe('ResilienceError');
    expect(String(error)).toBe('ResilienceError: too slow');
    expect(isResilienceError(error)).toBe(true);
    expect(isResilienceError(new Error('x'))).toBe(false);
    expect(isResilienceError({ kind: 'timeout', message: 'x' })).toBe(false);
  });

  it('captures no stack frames and leaves the stack trace limit as it was', () => {
    const limit = Error.stackTraceLimit;
    const error = new ResilienceError('queue_full', 'full');
    expect(error.stack).toBe('ResilienceError: full');
    expect(error.stack).not.toMatch(/\n\s+at /);
    expect(Error.stackTraceLimit).toBe(limit);
    expect(new Error('ordinary').stack).toMatch(/\n\s+at /);
  });

  it('restores a stack trace limit set by someone else', () => {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 3;
    try {
      void new ResilienceError('internal', 'x');
      expect(Error.stackTraceLimit).toBe(3);
    } finally {
      Error.stackTraceLimit = limit;
    }
  });

  describe('withAttempts', () => {
    it('returns the same failure with the number of attempts', () => {
      const cause = new Error('reset');
      const error = new ResilienceError('transient', 'upstream failed', { retryAfterMs: 2000, cause });
      const retried = error.withAttempts(3);
      expect(retried).not.toBe(error);
      expect(retried).toBeInstanceOf(ResilienceError);
      expect(retried.attempts).toBe(3);
      expect(retried.kind).toBe('transient');
      expect(retried.message).toBe('upstream failed');
      expect(retried.retryAfterMs).toBe(2000);
      expect(retried.status).toBe(502);
      expect(retried.jsonrpcCode).toBe(-32011);
      expect(retried.cause).toBe(cause);
      expect(retried.stack).toBe('ResilienceError: upstream failed');
      expect(error.attempts).toBe(0);
    });

    it('keeps a status override', () => {
      const error = new ResilienceError('invalid_request', 'too large', { status: 413 });
      expect(error.withAttempts(1).status).toBe(413);
    });

    it('returns the error itself when the attempts are unchanged', () => {
      const error = new ResilienceError('timeout', 'slow', { attempts: 2 });
      expect(error.withAttempts(2)).toBe(error);
    });
  });

  it('becomes an envelope with its kind, message, attempts, JSON-RPC code and retry-after only', () => {
    const error = new ResilienceError('queue_full', "lane 'render' is full: 1 running, 2 waiting", {
      attempts: 0,
      retryAfterMs: 1000,
      cause: new Error('internal detail'),
    });
    expect(toEnvelope(error, { callId: 'c-1', toolId: 'render_preview' })).toEqual({
      error: {
        kind: 'queue_full',
        message: "lane 'render' is full: 1 running, 2 waiting",
        attempts: 0,
        jsonrpcCode: -32006,
        retryAfterMs: 1000,
      },
      callId: 'c-1',
      toolId: 'render_preview',
    });
  });
});
