import fc from 'fast-check';

/**
 * What an untrusted upstream may send, for property tests of the readers: JSON *text* (so that
 * `__proto__` and `constructor` arrive as keys, as `JSON.parse` makes them, which an object built
 * in JavaScript cannot carry), with the keys the readers look for, numbers at every edge (huge,
 * negative, fractional, past 2^53) and nesting to a small depth; and a deeply nested value.
 */

const KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'type',
  'index',
  'id',
  'model',
  'choices',
  'delta',
  'message',
  'content',
  'refusal',
  'tool_calls',
  'function',
  'name',
  'arguments',
  'finish_reason',
  'usage',
  'prompt_tokens',
  'completion_tokens',
  'text',
  'partial_json',
  'thinking',
  'content_block',
  'input_tokens',
  'output_tokens',
  'error',
  'result',
  'params',
  'method',
  'data',
  'embedding',
];

/** Numbers an upstream may send where a count or an index belongs. */
export const hostileNumber = fc.oneof(
  fc.integer({ min: -5, max: 5 }),
  fc.constantFrom(1e308, -1e308, -1, 0.5, 2 ** 53, 2 ** 31, 300_000_000, Number.MAX_SAFE_INTEGER, 1023, 1024, 127, 128),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** One JSON value as text: any shape, the readers' keys among the others. */
export const hostileJsonText: fc.Arbitrary<string> = fc.letrec<{
  value: string;
  leaf: string;
  array: string;
  object: string;
}>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, tie('leaf'), tie('array'), tie('object')),
  leaf: fc.oneof(
    fc.constant('null'),
    fc.boolean().map(String),
    hostileNumber.map((number) => JSON.stringify(number)),
    fc.string({ maxLength: 8 }).map((text) => JSON.stringify(text)),
  ),
  array: fc.array(tie('value'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
  object: fc
    .array(fc.tuple(fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 4 })), tie('value')), { maxLength: 6 })
    .map((entries) => `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(',')}}`),
})).value;

/** A value nested `depth` deep: arrays in arrays, or objects in objects. */
export function deeplyNested(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/** `shape` with any of its leaves (`"$"`) replaced by hostile values: well-formed around, hostile inside. */
export function hostileWithin(shape: string): fc.Arbitrary<string> {
  const holes = shape.split('"$"').length - 1;
  return fc.array(hostileJsonText, { minLength: holes, maxLength: holes }).map((values) => {
    let at = 0;
    return shape.replace(/"\$"/g, () => values[at++]);
  });
}
