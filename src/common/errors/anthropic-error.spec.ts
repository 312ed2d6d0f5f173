import { anthropicStatus, toAnthropicError } from './anthropic-error';
import { ERROR_KINDS, type ErrorKind } from './error-kinds';
import { ResilienceError } from './resilience-error';

describe("errors in Anthropic's shape", () => {
  it.each<[ErrorKind, string, number]>([
    ['invalid_request', 'invalid_request_error', 400],
    ['schema', 'invalid_request_error', 400],
    ['unauthorized', 'authentication_error', 401],
    ['budget_exceeded', 'billing_error', 402],
    ['contained', 'permission_error', 403],
    ['egress_denied', 'permission_error', 403],
    ['not_found', 'not_found_error', 404],
    ['tool_changed', 'invalid_request_error', 409],
    ['idempotency_conflict', 'invalid_request_error', 422],
    ['rate_limited', 'rate_limit_error', 429],
    ['queue_full', 'overloaded_error', 529],
    ['queue_expired', 'overloaded_error', 529],
    ['circuit_open', 'overloaded_error', 529],
    ['stopped', 'overloaded_error', 529],
    ['unavailable', 'overloaded_error', 529],
    ['overloaded', 'overloaded_error', 529],
    ['timeout', 'timeout_error', 504],
    ['transient', 'api_error', 500],
    ['internal', 'api_error', 500],
  ])('answers %s as %s with %i', (kind, type, status) => {
    const error = new ResilienceError(kind, 'what happened', { attempts: 2 });

    expect(anthropicStatus(error)).toBe(status);
    expect(toAnthropicError(error, { callId: 'call-1' })).toEqual({
      type: 'error',
      error: { type, kind, message: 'what happened', attempts: 2, jsonrpcCode: ERROR_KINDS[kind].jsonrpcCode },
      callId: 'call-1',
    });
  });

  it('has a type for every kind', () => {
    for (const kind of Object.keys(ERROR_KINDS) as ErrorKind[]) {
      expect(toAnthropicError(new ResilienceError(kind, 'x')).error.type).toMatch(/_error$/);
    }
  });

  it('keeps the wait beside the type', () => {
    const error = new ResilienceError('rate_limited', 'slow down', { retryAfterMs: 1500 });

    expect(toAnthropicError(error).error).toMatchObject({ type: 'rate_limit_error', retryAfterMs: 1500 });
  });
});
