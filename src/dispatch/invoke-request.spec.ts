import fc from 'fast-check';
import { isResilienceError } from '../common';
import { idempotencyKeySchema, parseIdempotencyKey } from '../idempotency';
import { durationHeaderSchema, parseInvokeRequest } from './invoke-request';

const TOOL = { timeoutMs: 5000 };

const LANE_QUEUE_TTL_MS = 30_000;

function parse(body: unknown, headers: Record<string, string | string[] | undefined> = {}) {
  return parseInvokeRequest(TOOL, LANE_QUEUE_TTL_MS, body, headers);
}

/** The error `fn` throws; fails the test when it throws nothing. */
function thrownBy(fn: () => unknown) {
  try {
    fn();
  } catch (error) {
    if (!isResilienceError(error)) throw error;
    return error;
  }
  throw new Error('expected a ResilienceError, nothing was thrown');
}

describe('parseInvokeRequest', () => {
  describe('the body', () => {
    it('returns the arguments object as it is', () => {
      const args = { id: 7, nested: { list: [1, 2] } };

      expect(parse({ arguments: args }).arguments).toBe(args);
    });

    it.each([
      ['no body', undefined],
      ['a null body', null],
      ['an empty object', {}],
      ['"arguments" left out', { arguments: undefined }],
    ])('reads %s as empty arguments', (_label, body) => {
      expect(parse(body).arguments).toEqual({});
    });

    it.each([
      ['an array', [{ arguments: {} }]],
      ['an empty array', []],
      ['a string', '{"arguments":{}}'],
      ['a number', 1],
      ['a boolean', true],
    ])('refuses %s as the body with invalid_request', (_label, body) => {
      expect(thrownBy(() => parse(body))).toMatchObject({
        kind: 'invalid_request',
        message: 'the body must be a JSON object',
      });
    });

    it.each([
      ['a string', 'x'],
      ['an array', [1]],
      ['null', null],
      ['a number', 3],
    ])('refuses "arguments" as %s with invalid_request', (_label, args) => {
      expect(thrownBy(() => parse({ arguments: args }))).toMatchObject({
        kind: 'invalid_request',
        message: '"arguments" must be a JSON object',
      });
    });

    it.each([
      ['a key beside "arguments"', { arguments: {}, tenant: 'acme' }],
      ['only an unknown key', { args: {} }],
      ['a "__proto__" key from JSON', JSON.parse('{"__proto__": {"admin": true}}')],
    ])('refuses %s with invalid_request without naming it', (_label, body) => {
      const error = thrownBy(() => parse(body));

      expect(error).toMatchObject({ kind: 'invalid_request', message: 'the body may only hold "arguments"' });
    });
  });

  describe('X-Timeout-Ms', () => {
    it("uses the tool's timeoutMs when the header is absent", () => {
      expect(parse({}).timeoutMs).toBe(5000);
    });

    it.each([
      ['1', 1],
      ['250', 250],
      ['0.5', 0.5],
      ['4999.999', 4999.999],
      ['5000', 5000],
    ])('takes %j as %d ms', (value, expectedMs) => {
      expect(parse({}, { 'x-timeout-ms': value }).timeoutMs).toBe(expectedMs);
    });

    it.each([
      '0',
      '0.000',
      '-1',
      '5000.001',
      '5001',
      'abc',
      'Infinity',
      'NaN',
      '1e3',
      '0x10',
      '.5',
      '1.',
      ' 5',
      '',
      '1,000',
    ])('refuses %j with invalid_request naming the maximum', (value) => {
      const error = thrownBy(() => parse({}, { 'x-timeout-ms': value }));

      expect(error).toMatchObject({
        kind: 'invalid_request',
        message: 'X-Timeout-Ms must be a positive number of milliseconds, at most 5000',
      });
    });

    it('refuses a repeated header', () => {
      expect(thrownBy(() => parse({}, { 'x-timeout-ms': ['100', '200'] })).kind).toBe('invalid_request');
    });
  });

  describe('X-Queue-Ttl-Ms', () => {
    it('leaves the queue TTL to the lane when the header is absent', () => {
      expect(parse({}).queueTtlMs).toBeUndefined();
    });

    it.each([
      ['1', 1],
      ['1000', 1000],
      ['30000', 30_000],
    ])('takes %j as %d ms', (value, expectedMs) => {
      expect(parse({}, { 'x-queue-ttl-ms': value }).queueTtlMs).toBe(expectedMs);
    });

    it.each(['0', '-5', '30001', 'Infinity', '3e4', 'later'])('refuses %j with invalid_request', (value) => {
      expect(thrownBy(() => parse({}, { 'x-queue-ttl-ms': value }))).toMatchObject({
        kind: 'invalid_request',
        message: 'X-Queue-Ttl-Ms must be a positive number of milliseconds, at most 30000',
      });
    });

    it("measures the maximum against the lane's queue TTL, not the tool's timeout", () => {
      expect(parseInvokeRequest(TOOL, 100, {}, { 'x-queue-ttl-ms': '100' }).queueTtlMs).toBe(100);
      expect(thrownBy(() => parseInvokeRequest(TOOL, 100, {}, { 'x-queue-ttl-ms': '101' })).kind).toBe(
        'invalid_request',
      );
    });
  });

  it('reads the body and both headers together', () => {
    expect(parse({ arguments: { q: 1 } }, { 'x-timeout-ms': '100', 'x-queue-ttl-ms': '200' })).toEqual({
      arguments: { q: 1 },
      timeoutMs: 100,
      queueTtlMs: 200,
    });
  });
});

describe('the header checks agree with their schemas', () => {
  /** Header values near the rules: visible ASCII, digits with dots, and anything else. */
  const nearHeader = fc.oneof(
    fc.string(),
    fc.string({ unit: fc.constantFrom(...'0123456789.'), maxLength: 14 }),
    fc.string({ unit: fc.integer({ min: 0x1f, max: 0x7f }).map((code) => String.fromCharCode(code)), maxLength: 300 }),
    fc.array(fc.string(), { maxLength: 2 }),
  );

  it('accepts an Idempotency-Key exactly when its schema does', () => {
    fc.assert(
      fc.property(nearHeader, (value) => {
        const accepted = !threw(() => parseIdempotencyKey(value));
        expect(accepted).toBe(idempotencyKeySchema.safeParse(value).success);
      }),
      { numRuns: 2000 },
    );
  });

  it('accepts X-Timeout-Ms exactly when its schema does and it is positive', () => {
    const tool = { timeoutMs: 1e12 };
    fc.assert(
      fc.property(nearHeader, (value) => {
        const accepted = !threw(() => parseInvokeRequest(tool, 1, {}, { 'x-timeout-ms': value as string }));
        expect(accepted).toBe(durationHeaderSchema.safeParse(value).success && Number(value) > 0);
      }),
      { numRuns: 2000 },
    );
  });
});

/** Whether `fn` throws a ResilienceError. */
function threw(fn: () => unknown): boolean {
  try {
    fn();
    return false;
  } catch (error) {
    if (!isResilienceError(error)) throw error;
    return true;
  }
}
