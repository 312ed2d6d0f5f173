import fc from 'fast-check';
import { z } from 'zod';
import { durationHeaderSchema, invokeBodySchema } from '../dispatch/invoke-request';
import { idempotencyKeySchema } from '../idempotency';
import { compileRequestCheck, compileRequestParser, parseBodyFields, parseRequestPart } from './request-schema';
import { returnedOrThrown } from '../../test/support/thrown';

/** Values near an invoke body: mostly objects with `arguments`, some with other keys or types. */
const nearInvokeBody = fc.oneof(
  fc.jsonValue(),
  fc.record({ arguments: fc.jsonValue() }),
  fc.record({ arguments: fc.dictionary(fc.string(), fc.jsonValue()) }, { requiredKeys: [] }),
  fc.dictionary(fc.constantFrom('arguments', 'args', '__proto__', 'tenant'), fc.jsonValue()),
);

/** Strings near the header rules: visible ASCII, digits with dots, and anything else. */
const nearHeader = fc.oneof(
  fc.string(),
  fc.string({ unit: fc.constantFrom(...'0123456789.'), maxLength: 14 }),
  fc.string({ unit: fc.integer({ min: 0x1f, max: 0x7f }).map((code) => String.fromCharCode(code)), maxLength: 300 }),
  fc.array(fc.string(), { maxLength: 2 }),
);

describe('parseBodyFields', () => {
  const schema = z.object({
    model: z.string(),
    input: z.union([z.string(), z.array(z.string())]),
    messages: z.array(z.object({ role: z.enum(['user', 'assistant']) })).min(1),
  });
  const valid = { model: 'm', input: 'x', messages: [{ role: 'user' }] };

  it.each<[string, unknown, string]>([
    ['not an object', [1], 'the body must be a JSON object'],
    ['a missing field', { ...valid, model: undefined }, 'model: is required'],
    ['a field of the wrong type', { ...valid, model: 5 }, 'model: Invalid input: expected string, received number'],
    ['a missing union', { ...valid, input: undefined }, 'input: is required'],
    ['a union of the wrong type', { ...valid, input: 5 }, 'input: Invalid input'],
    ['an empty list', { ...valid, messages: [] }, 'messages: must not be empty'],
    [
      'a nested field',
      { ...valid, messages: [{ role: 'bot' }] },
      'messages.0.role: Invalid option: expected one of "user"|"assistant"',
    ],
  ])('names where the problem is: %s', (_what, body, message) => {
    expect(returnedOrThrown(() => parseBodyFields(schema, body))).toEqual({ kind: 'invalid_request', message });
  });
});

describe('parseRequestPart', () => {
  const schema = z.strictObject(
    { n: z.int({ error: 'n must be an integer' }) },
    { error: (issue) => (issue.code === 'unrecognized_keys' ? 'only n' : 'an object') },
  );

  it('returns what the schema parsed', () => {
    expect(parseRequestPart(schema, { n: 3 })).toEqual({ n: 3 });
  });

  it("throws invalid_request with the schema's message", () => {
    expect(returnedOrThrown(() => parseRequestPart(schema, { n: 'x' }))).toEqual({
      kind: 'invalid_request',
      message: 'n must be an integer',
    });
  });

  it('reports the shape of the value before its fields', () => {
    expect(returnedOrThrown(() => parseRequestPart(schema, { n: 'x', extra: 1 }))).toEqual({
      kind: 'invalid_request',
      message: 'only n',
    });
  });
});

describe('compileRequestParser', () => {
  it('returns an accepted value as it is, not a copy', () => {
    const body = { arguments: { deep: { list: [1] } } };

    expect(compileRequestParser(invokeBodySchema)(body)).toBe(body);
  });

  it('names the problem as zod does when the compiled check refuses', () => {
    expect(returnedOrThrown(() => compileRequestParser(invokeBodySchema)({ arguments: [] }))).toEqual({
      kind: 'invalid_request',
      message: '"arguments" must be a JSON object',
    });
  });

  it.each([
    ['the invoke body', invokeBodySchema, nearInvokeBody],
    ['Idempotency-Key', idempotencyKeySchema, nearHeader],
    ['X-Timeout-Ms', durationHeaderSchema, nearHeader],
  ] as const)('accepts exactly what the zod schema of %s accepts', (_label, schema, values) => {
    const compiled = compileRequestCheck(schema);
    fc.assert(
      fc.property(values as fc.Arbitrary<unknown>, (value) => {
        expect(compiled(value)).toBe(schema.safeParse(value).success);
      }),
      { numRuns: 2000 },
    );
  });

  it('answers every value as zod alone would', () => {
    const compiled = compileRequestParser(invokeBodySchema);
    fc.assert(
      fc.property(nearInvokeBody, (value) => {
        expect(returnedOrThrown(() => compiled(value))).toEqual(
          returnedOrThrown(() => parseRequestPart(invokeBodySchema, value)),
        );
      }),
      { numRuns: 2000 },
    );
  });
});
