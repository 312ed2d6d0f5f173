import { isResilienceError } from '../../common';
import { parseBatchEntry, parseBatchField, parseBatchRequest } from './batch-request';

/** The message `fn` throws as `invalid_request`; fails the test when it throws nothing. */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (!isResilienceError(error)) throw error;
    expect(error.kind).toBe('invalid_request');
    return error.message;
  }
  throw new Error('expected a ResilienceError, nothing was thrown');
}

describe('parseBatchRequest', () => {
  it('keeps the entries as sent and defaults concurrency to 8', () => {
    const calls = [{ toolId: 'a' }, 'not even an object'];

    expect(parseBatchRequest({ calls })).toEqual({ calls, concurrency: 8 });
  });

  it.each([1, 64])('takes concurrency %d', (concurrency) => {
    expect(parseBatchRequest({ calls: [], concurrency }).concurrency).toBe(concurrency);
  });

  it.each([
    ['a list', [], 'the body must be a JSON object'],
    ['null', null, 'the body must be a JSON object'],
    ['an extra key', { calls: [], timeoutMs: 5 }, 'the body may only hold "calls" and "concurrency"'],
    ['an extra key and bad calls', { calls: 'x', timeoutMs: 5 }, 'the body may only hold "calls" and "concurrency"'],
    ['no calls', { concurrency: 2 }, '"calls" must be a list of at most 256 calls'],
    ['257 calls', { calls: new Array(257).fill({}) }, '"calls" must be a list of at most 256 calls'],
    ['concurrency 0', { calls: [], concurrency: 0 }, '"concurrency" must be an integer from 1 to 64'],
    ['concurrency 65', { calls: [], concurrency: 65 }, '"concurrency" must be an integer from 1 to 64'],
    ['concurrency 1.5', { calls: [], concurrency: 1.5 }, '"concurrency" must be an integer from 1 to 64'],
    ['concurrency "2"', { calls: [], concurrency: '2' }, '"concurrency" must be an integer from 1 to 64'],
    ['concurrency null', { calls: [], concurrency: null }, '"concurrency" must be an integer from 1 to 64'],
  ])('refuses %s', (_label, body, message) => {
    expect(refusal(() => parseBatchRequest(body))).toBe(message);
  });
});

describe('a batch entry', () => {
  it('keeps the fields as sent, checking only the shape', () => {
    expect(parseBatchEntry({ toolId: 7, arguments: [] })).toEqual({ toolId: 7, arguments: [] });
  });

  it.each([
    ['a string', 'x', 'each call must be a JSON object'],
    ['null', null, 'each call must be a JSON object'],
    ['a list', ['read'], 'each call must be a JSON object'],
    [
      'an extra key',
      { toolId: 'read', timeoutMs: 5 },
      'a call may only hold toolId, arguments, idempotencyKey and callId',
    ],
  ])('refuses %s as a whole', (_label, entry, message) => {
    expect(refusal(() => parseBatchEntry(entry))).toBe(message);
  });

  it('takes absent fields as absent', () => {
    expect(parseBatchField('callId', undefined)).toBeUndefined();
    expect(parseBatchField('arguments', undefined)).toBeUndefined();
    expect(parseBatchField('idempotencyKey', undefined)).toBeUndefined();
  });

  it.each([
    ['callId', 'has space', 'callId must be 1-48 letters, digits, "_" or "-"'],
    ['callId', 4242, 'callId must be 1-48 letters, digits, "_" or "-"'],
    ['callId', '', 'callId must be 1-48 letters, digits, "_" or "-"'],
    ['arguments', ['x'], '"arguments" must be a JSON object'],
    ['arguments', null, '"arguments" must be a JSON object'],
    ['idempotencyKey', 'has space', 'Idempotency-Key must be 1-255 visible ASCII characters'],
    ['idempotencyKey', 7, 'Idempotency-Key must be 1-255 visible ASCII characters'],
  ] as const)('refuses %s %j', (field, value, message) => {
    expect(refusal(() => parseBatchField(field, value))).toBe(message);
  });

  it('returns the arguments object as it is', () => {
    const args = { q: 1 };

    expect(parseBatchField('arguments', args)).toBe(args);
  });
});
