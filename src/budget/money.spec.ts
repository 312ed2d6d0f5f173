import fc from 'fast-check';
import { assertMicros, microsToUsd, usdToMicros } from './money';

describe('usdToMicros', () => {
  it.each([
    [0, 0],
    [1, 1_000_000],
    [0.001, 1_000],
    [0.1, 100_000],
    [0.3, 300_000],
    [10, 10_000_000],
    [1_000_000, 1_000_000_000_000],
    [123.456789, 123_456_789],
  ])('converts %p USD to %p micro-dollars', (usd, micros) => {
    expect(usdToMicros(usd)).toBe(micros);
  });

  it.each([
    [0.0000004, 0],
    [0.00000049, 0],
    [0.0000005, 1],
    [0.0000015, 2],
    [1.0000005, 1_000_001],
    [2.0000005, 2_000_001],
    [0.1234565, 123_457],
    [0.1234564999, 123_456],
    [1e-7, 0],
    [5e-7, 1],
    [4.5e-7, 0],
  ])('rounds %p USD half up to %p micro-dollars', (usd, micros) => {
    expect(usdToMicros(usd)).toBe(micros);
  });

  it('rounds the decimal as written, where multiplying by 10^6 in floating point would round down', () => {
    // 0.0001245 * 1e6 is 124.49999999999999 in binary floating point.
    expect(0.0001245 * 1e6).toBeLessThan(124.5);
    expect(usdToMicros(0.0001245)).toBe(125);
  });

  it('reads -0 as 0', () => {
    expect(usdToMicros(-0)).toBe(0);
  });

  it.each([
    ['a negative amount', -0.000001],
    ['a large negative amount', -1e21],
    ['NaN', Number.NaN],
    ['Infinity', Infinity],
    ['-Infinity', -Infinity],
    ['an amount beyond 2^53 micro-dollars', 1e10],
    ['an amount printed in exponent form beyond 2^53 micro-dollars', 1.5e21],
  ])('refuses %s with a RangeError', (_, usd) => {
    expect(() => usdToMicros(usd)).toThrow(RangeError);
  });

  it('accepts amounts up to 2^53 - 1 micro-dollars and refuses one just beyond', () => {
    expect(usdToMicros(9_007_199_254.74099)).toBe(9_007_199_254_740_990);
    expect(() => usdToMicros(9_007_199_254.740993)).toThrow(RangeError);
  });

  it('answers a safe integer within half a micro-dollar of the amount, for any amount up to a million USD', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1_000_000, noNaN: true }), (usd) => {
        const micros = usdToMicros(usd);
        expect(Number.isSafeInteger(micros)).toBe(true);
        expect(Math.abs(micros - usd * 1_000_000)).toBeLessThanOrEqual(0.5 + 1e-6 * Math.max(1, usd));
      }),
    );
  });

  it('converts every whole number of micro-dollars up to a billion USD back exactly', () => {
    // Up to 15 significant digits every decimal survives a round trip through a double.
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 ** 15 }), (micros) => {
        expect(usdToMicros(microsToUsd(micros))).toBe(micros);
      }),
    );
  });
});

describe('microsToUsd', () => {
  it.each([
    [0, 0],
    [1, 0.000001],
    [1_000, 0.001],
    [1_500, 0.0015],
    [300_000, 0.3],
    [123_456_789, 123.456789],
    [-2_500_000, -2.5],
  ])('converts %p micro-dollars to %p USD', (micros, usd) => {
    expect(microsToUsd(micros)).toBe(usd);
  });

  it('shows a sum of integer micro-dollars as the decimal it is, where a sum of USD floats drifts', () => {
    const floatSum = 0.1 + 0.2;
    const microSum = usdToMicros(0.1) + usdToMicros(0.2);

    expect(floatSum).not.toBe(0.3);
    expect(microsToUsd(microSum)).toBe(0.3);
  });

  it.each([
    ['a fractional value', 0.5],
    ['NaN', Number.NaN],
    ['Infinity', Infinity],
    ['a value beyond 2^53', 2 ** 53],
  ])('refuses %s with a RangeError', (_, micros) => {
    expect(() => microsToUsd(micros)).toThrow(RangeError);
  });
});

describe('assertMicros', () => {
  it('accepts whole, non-negative, safe numbers of micro-dollars', () => {
    for (const value of [0, 1, 1_000, Number.MAX_SAFE_INTEGER])
      expect(() => assertMicros(value, 'amount')).not.toThrow();
  });

  it.each([[-1], [0.5], [Number.NaN], [Infinity], [2 ** 53]])(
    'refuses %p with a RangeError naming the argument',
    (value) => {
      expect(() => assertMicros(value, 'capMicros')).toThrow(RangeError);
      expect(() => assertMicros(value, 'capMicros')).toThrow(/^capMicros /);
    },
  );
});
