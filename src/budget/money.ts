/** Micro-dollars in one US dollar. */
export const MICROS_PER_USD = 1_000_000;

const DECIMALS = 6;

/**
 * USD as integer micro-dollars, rounded half up at the sixth decimal. The rounding works on
 * the decimal the number prints as (`0.0000005` → 1, `1.0000005` → 1000001), not on the binary
 * product `usd * 1e6`, which would round some halves down. Money is summed only as integers.
 * @throws RangeError for a negative, NaN or infinite amount, or one beyond
 *   `Number.MAX_SAFE_INTEGER` micro-dollars (about 9 billion USD).
 */
export function usdToMicros(usd: number): number {
  if (typeof usd !== 'number' || !Number.isFinite(usd) || usd < 0) {
    throw new RangeError(`a USD amount must be a finite number of at least 0, got ${String(usd)}`);
  }
  const micros = roundedMicros(String(usd));
  if (micros > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError(`a USD amount must be at most ${Number.MAX_SAFE_INTEGER / MICROS_PER_USD}, got ${usd}`);
  }
  return Number(micros);
}

/**
 * Integer micro-dollars as USD, for display and the API (`1500` → `0.0015`): the nearest
 * double to the exact decimal, which prints as that decimal up to 10^15 micro-dollars (a
 * billion USD). Convert only to show a result; never add the USD it answers.
 * @throws RangeError for a value that is not a safe integer.
 */
export function microsToUsd(micros: number): number {
  if (!Number.isSafeInteger(micros)) {
    throw new RangeError(`micro-dollars must be a safe integer, got ${String(micros)}`);
  }
  return micros / MICROS_PER_USD;
}

/**
 * Checks that `value` is a whole, non-negative number of micro-dollars (a cap, an amount, a
 * charge) that sums exactly.
 * @throws RangeError otherwise, naming the argument.
 */
export function assertMicros(value: number, name: string): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a whole number of micro-dollars of at least 0, got ${String(value)}`);
  }
}

/** `text` is how a finite non-negative number prints: `12.5`, `1e-7`, `1.5e+21`. */
function roundedMicros(text: string): bigint {
  const [mantissa, exponent = '0'] = text.split('e');
  const [whole, fraction = ''] = mantissa.split('.');
  const digits = whole + fraction;
  // Where the decimal point falls among `digits` once the amount is scaled by 10^6.
  const point = whole.length + Number(exponent) + DECIMALS;
  if (point <= 0) return point === 0 && digits[0] >= '5' ? 1n : 0n;
  const integer = point >= digits.length ? digits + '0'.repeat(point - digits.length) : digits.slice(0, point);
  const roundsUp = point < digits.length && digits[point] >= '5';
  return BigInt(integer) + (roundsUp ? 1n : 0n);
}
