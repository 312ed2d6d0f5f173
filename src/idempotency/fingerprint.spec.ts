import { argumentsFingerprint, canonicalJson, scopedIdempotencyKey } from './fingerprint';

describe('argumentsFingerprint', () => {
  it('is a SHA-256 in hex', () => {
    expect(argumentsFingerprint({ q: 'x' })).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is the same for the same arguments', () => {
    expect(argumentsFingerprint({ q: 'cats', limit: 3 })).toBe(argumentsFingerprint({ q: 'cats', limit: 3 }));
  });

  it('ignores the order of keys at the top level', () => {
    expect(argumentsFingerprint({ a: 1, b: 'two', c: null })).toBe(argumentsFingerprint({ c: null, b: 'two', a: 1 }));
  });

  it('ignores the order of keys at every depth, including objects inside arrays', () => {
    const one = { order: { id: 7, lines: [{ sku: 'a', qty: 1, meta: { x: 1, y: [{ p: 1, q: 2 }] } }] }, user: 'u' };
    const other = { user: 'u', order: { lines: [{ meta: { y: [{ q: 2, p: 1 }], x: 1 }, qty: 1, sku: 'a' }], id: 7 } };

    expect(argumentsFingerprint(one)).toBe(argumentsFingerprint(other));
    expect(canonicalJson(one)).toBe(canonicalJson(other));
  });

  it('keeps the order of array items', () => {
    expect(argumentsFingerprint({ ids: [1, 2, 3] })).not.toBe(argumentsFingerprint({ ids: [3, 2, 1] }));
    expect(argumentsFingerprint([{ a: 1 }, { b: 2 }])).not.toBe(argumentsFingerprint([{ b: 2 }, { a: 1 }]));
  });

  it.each<[string, unknown, unknown]>([
    ['another number', { amount: 100 }, { amount: 101 }],
    ['a number and its string', { amount: 100 }, { amount: '100' }],
    ['true and "true"', { flag: true }, { flag: 'true' }],
    ['null and the string "null"', { note: null }, { note: 'null' }],
    ['null and a missing key', { note: null }, {}],
    ['an empty object and an empty array', { items: {} }, { items: [] }],
    ['another key with the same value', { a: 1 }, { b: 1 }],
    ['a nested difference', { o: { p: { q: [1, { r: 'x' }] } } }, { o: { p: { q: [1, { r: 'y' }] } } }],
    ['one more array item', { ids: [1, 2] }, { ids: [1, 2, 2] }],
    ['an array and its items spread into the parent', { a: [1, 2] }, { a: 1, b: 2 }],
    ['a key that spells out two fields and those two fields', { 'a:1,b': 2 }, { a: 1, b: 2 }],
    ['a key holding quotes and two fields', { 'a":1,"b': 2 }, { a: 1, b: 2 }],
    ['strings that differ only in escaping', { s: 'a"b' }, { s: 'a\\"b' }],
    ['strings that differ only in Unicode form', { s: 'é' }, { s: 'e\u0301' }],
  ])('differs for %s', (_label, one, other) => {
    expect(argumentsFingerprint(one)).not.toBe(argumentsFingerprint(other));
  });

  it('treats an undefined field as absent, as JSON does', () => {
    expect(argumentsFingerprint({ a: 1, b: undefined })).toBe(argumentsFingerprint({ a: 1 }));
  });

  it('is the same before and after a JSON round trip of the arguments', () => {
    const args = { z: [1, { y: 'é', x: null }], a: { c: true, b: 2.5 } };

    expect(argumentsFingerprint(JSON.parse(JSON.stringify(args)))).toBe(argumentsFingerprint(args));
  });

  it('keeps the canonical JSON and fingerprint of earlier versions, so stored keys still match', () => {
    // Pinned from the recursive implementation: idempotency records and LLM cache entries in a
    // shared Redis were keyed with it.
    const args = {
      z: [1, { y: 'é\n"q"', x: null, w: undefined }, [], {}],
      a: { c: true, b: -2.5e-7, d: [[['deep']]] },
      '': 'empty key',
      'ü\u2028': 0,
    };

    expect(canonicalJson(args)).toBe(
      '{"":"empty key","a":{"b":-2.5e-7,"c":true,"d":[[["deep"]]]},"z":[1,{"x":null,"y":"é\\n\\"q\\""},[],{}],"ü\u2028":0}',
    );
    expect(argumentsFingerprint(args)).toBe('c6af62128ca19900f1e4f3e443d049848ab56c29eafd27768167fa26078759e2');
  });

  it.each<[string, unknown, string]>([
    ['a string', 'x', '"x"'],
    ['a number', 1.5, '1.5'],
    ['null', null, 'null'],
    ['undefined', undefined, 'null'],
    ['an empty object', {}, '{}'],
    ['an empty array', [], '[]'],
    ['undefined and a function in an array', [undefined, () => 1], '[null,null]'],
    ['a function field', { f: () => 1 }, '{"f":null}'],
  ])('writes %s as before', (_label, value, expected) => {
    expect(canonicalJson(value)).toBe(expected);
  });

  it('writes a value nested 100,000 levels deep without overflowing the stack (docs/pitfalls.md #19)', () => {
    const depth = 100_000;
    let objects: unknown = {};
    let arrays: unknown = [];
    for (let level = 1; level < depth; level++) {
      objects = { b: 1, a: objects };
      arrays = [arrays, 2];
    }

    expect(canonicalJson(objects)).toBe(`${'{"a":'.repeat(depth - 1)}{}${',"b":1}'.repeat(depth - 1)}`);
    expect(canonicalJson(arrays)).toBe(`${'['.repeat(depth)}]${',2]'.repeat(depth - 1)}`);
    expect(argumentsFingerprint({ deep: arrays })).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses a circular value with a TypeError, as JSON.stringify does', () => {
    const circular: Record<string, unknown> = { a: [1, { b: 2 }] };
    ((circular.a as unknown[])[1] as Record<string, unknown>).back = circular;

    expect(() => canonicalJson(circular)).toThrow(TypeError);
  });

  it('writes the same object twice when it is shared, not nested in itself', () => {
    const shared = { x: 1 };

    expect(canonicalJson({ a: shared, b: [shared, shared] })).toBe('{"a":{"x":1},"b":[{"x":1},{"x":1}]}');
  });
});

describe('scopedIdempotencyKey', () => {
  it('is the same for the same tenant, tool and key', () => {
    expect(scopedIdempotencyKey('acme', 'search', 'order-42')).toBe(scopedIdempotencyKey('acme', 'search', 'order-42'));
  });

  it('separates tenants', () => {
    expect(scopedIdempotencyKey('acme', 'search', 'order-42')).not.toBe(
      scopedIdempotencyKey('globex', 'search', 'order-42'),
    );
  });

  it('separates tools', () => {
    expect(scopedIdempotencyKey('acme', 'search', 'order-42')).not.toBe(
      scopedIdempotencyKey('acme', 'render', 'order-42'),
    );
  });

  it('separates keys', () => {
    expect(scopedIdempotencyKey('acme', 'search', 'order-42')).not.toBe(
      scopedIdempotencyKey('acme', 'search', 'order-43'),
    );
  });

  it('does not let a tenant and tool run together into another pair', () => {
    expect(scopedIdempotencyKey('ab', 'c', 'k')).not.toBe(scopedIdempotencyKey('a', 'bc', 'k'));
    expect(scopedIdempotencyKey('a', 'b', 'ck')).not.toBe(scopedIdempotencyKey('a', 'bc', 'k'));
  });

  it('does not contain the raw key, the tenant or the tool', () => {
    // Hex digits only, so a digest that merely copied it in would be caught.
    const raw = 'c0ffee4242deadbeef';
    const scoped = scopedIdempotencyKey('acme', 'payments', raw);

    expect(scoped).toMatch(/^[0-9a-f]{64}$/);
    expect(scoped).not.toContain(raw);
    expect(scoped).not.toContain('acme');
    expect(scoped).not.toContain('payments');
  });
});
