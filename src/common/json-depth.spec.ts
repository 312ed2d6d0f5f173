import { jsonDepthExceeds, MAX_JSON_DEPTH } from './json-depth';

/** `depth` objects inside one another: `{ a: { a: ... {} } }`. */
function nestedObjects(depth: number): unknown {
  let value: unknown = {};
  for (let level = 1; level < depth; level++) value = { a: value };
  return value;
}

/** `depth` arrays inside one another: `[[...[]]]`. */
function nestedArrays(depth: number): unknown {
  let value: unknown = [];
  for (let level = 1; level < depth; level++) value = [value];
  return value;
}

describe('jsonDepthExceeds', () => {
  it('is 64 levels for request bodies', () => {
    expect(MAX_JSON_DEPTH).toBe(64);
  });

  it.each<[string, unknown]>([
    ['a string', 'x'],
    ['a number', 1],
    ['true', true],
    ['null', null],
    ['undefined', undefined],
  ])('counts %s as no level at all', (_label, value) => {
    expect(jsonDepthExceeds(value, 0)).toBe(false);
  });

  it.each<[string, unknown]>([
    ['an empty object', {}],
    ['an empty array', []],
    ['an object of scalars', { a: 1, b: 'two', c: null }],
    ['an array of scalars', [1, 'two', null]],
  ])('counts %s as one level', (_label, value) => {
    expect(jsonDepthExceeds(value, 0)).toBe(true);
    expect(jsonDepthExceeds(value, 1)).toBe(false);
  });

  it.each<[string, (depth: number) => unknown]>([
    ['objects', nestedObjects],
    ['arrays', nestedArrays],
  ])('allows %s nested exactly to the limit and refuses one level more', (_label, nested) => {
    expect(jsonDepthExceeds(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
    expect(jsonDepthExceeds(nested(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(true);
  });

  it('counts objects and arrays alike when they alternate', () => {
    let value: unknown = {};
    for (let level = 1; level < 10; level++) value = level % 2 ? [value] : { a: value };

    expect(jsonDepthExceeds(value, 10)).toBe(false);
    expect(jsonDepthExceeds(value, 9)).toBe(true);
  });

  it('finds the deepest branch wherever it is among many shallow siblings', () => {
    const siblings = Array.from({ length: 1_000 }, (_, n) => ({ n: [n] }));
    const lastDeep = { first: siblings, middle: { x: 1 }, last: [...siblings, nestedObjects(8)] };

    expect(jsonDepthExceeds(lastDeep, 10)).toBe(false);
    expect(jsonDepthExceeds(lastDeep, 9)).toBe(true);
  });

  it('measures depth, not size: a wide value of many shallow items is within a small limit', () => {
    const wide = { items: Array.from({ length: 100_000 }, (_, n) => ({ n, tags: ['a', 'b'] })) };

    expect(jsonDepthExceeds(wide, 4)).toBe(false);
  });

  it('walks a value nested 100,000 levels deep without recursion', () => {
    const deep = nestedObjects(100_000);

    expect(jsonDepthExceeds(deep, MAX_JSON_DEPTH)).toBe(true);
    expect(jsonDepthExceeds(deep, 99_999)).toBe(true);
    expect(jsonDepthExceeds(deep, 100_000)).toBe(false);
  });

  it('answers a circular value as too deep instead of walking it forever', () => {
    const circular: Record<string, unknown> = { a: [1] };
    (circular.a as unknown[]).push(circular);

    expect(jsonDepthExceeds(circular, MAX_JSON_DEPTH)).toBe(true);
  });

  it('reads only own fields: an inherited enumerable object adds no depth', () => {
    const inherited = Object.create({ deep: nestedObjects(10) }) as Record<string, unknown>;
    inherited.own = 1;

    expect(jsonDepthExceeds({ value: inherited }, 2)).toBe(false);
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('throws RangeError for a limit of %p', (limit) => {
    expect(() => jsonDepthExceeds({}, limit)).toThrow(RangeError);
  });
});
