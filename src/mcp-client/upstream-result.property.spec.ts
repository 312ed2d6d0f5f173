import fc from 'fast-check';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { readToolResult, UpstreamResultInvalid } from './upstream-result';

/** Keys that mean something to JavaScript objects, which an upstream may send as plain JSON keys. */
const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'];

/** JSON values with the numbers and keys upstreams should not send. */
const hostileJson = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(null, true, false, '', 'text', 0, -1, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 2 ** 53, -0),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.string(),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.constantFrom(...PROTOTYPE_KEYS), fc.string()), tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** A block of content, of a known type or not, its fields any JSON. */
const blockOf = fc.oneof(
  fc.record({ type: fc.constant('text'), text: fc.oneof(fc.string(), hostileJson) }),
  fc.record({ type: fc.constantFrom('image', 'audio'), data: hostileJson, mimeType: hostileJson }),
  fc.record({ type: fc.constantFrom('resource', 'resource_link'), resource: hostileJson, uri: hostileJson }),
  fc.record({ type: hostileJson }, { requiredKeys: [] }),
  hostileJson,
);

/** A result: each field present or not, right or wrong. */
const resultOf = fc.oneof(
  fc.record(
    {
      content: fc.oneof(fc.array(blockOf, { maxLength: 5 }), hostileJson),
      structuredContent: hostileJson,
      isError: fc.oneof(fc.boolean(), hostileJson),
      _meta: hostileJson,
      toolResult: hostileJson,
    },
    { requiredKeys: [] },
  ),
  hostileJson,
);

/** The value nested `depth` levels deep, as arrays or objects. */
function nested(depth: number, asArray: boolean): unknown {
  let value: unknown = 1;
  for (let level = 0; level < depth; level++) value = asArray ? [value] : { a: value };
  return value;
}

/** Reads `value`: the result, or the typed failure; anything else thrown fails the test. */
function outcomeOf(value: unknown): { ok: true; result: unknown } | { ok: false } {
  try {
    return { ok: true, result: readToolResult(value) };
  } catch (error) {
    expect(error).toBeInstanceOf(UpstreamResultInvalid);
    return { ok: false };
  }
}

describe('readToolResult (property)', () => {
  it('answers a result MCP allows, or fails with UpstreamResultInvalid: never anything else', () => {
    fc.assert(
      fc.property(resultOf, (value) => {
        // As the wire brings it: JSON text parsed, `__proto__` an own key like any other.
        const outcome = outcomeOf(JSON.parse(JSON.stringify(value)));
        if (!outcome.ok) return;
        const { result } = outcome;

        expect(CallToolResultSchema.safeParse(result).success).toBe(true);
        expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
        expect(Array.isArray((result as { content: unknown }).content)).toBe(true);
        expect(() => JSON.stringify(result)).not.toThrow();
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      { numRuns: 3_000 },
    );
  });

  it.each([
    ['arrays', true],
    ['objects', false],
  ])(
    'fails a result whose structured content nests %s thousands of levels deep, before anything recurses into it',
    (_what, asArray) => {
      const deep = { content: [], structuredContent: { value: nested(100_000, asArray) } };

      expect(outcomeOf(deep)).toEqual({ ok: false });
    },
  );

  it('changes no prototype when the upstream sends prototype keys', () => {
    const sent = JSON.parse(
      '{"content":[{"type":"text","text":"hi"}],"structuredContent":{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}}}',
    ) as unknown;

    const outcome = outcomeOf(sent);

    expect(outcome.ok).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const structured = (outcome as { result: { structuredContent: Record<string, unknown> } }).result.structuredContent;
    expect(Object.getPrototypeOf(structured)).toBe(Object.prototype);
    expect((structured as { polluted?: unknown }).polluted).toBeUndefined();
  });
});
