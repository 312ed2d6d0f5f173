/**
 * A reply from Redis that is not what the script or command answers: a proxy in between, a
 * script of another version under the same name, a key another program wrote. A store rejects
 * with it, as with any failure of the store, so each feature fails as it does when Redis is
 * down (budgets and idempotency keys closed, rate limits by their fail mode, containment to the
 * isolated pool): never a crash, and never a NaN or a wrong number in the books. The message
 * names the script and what was expected, never the reply.
 */
export class RedisReplyError extends Error {
  override readonly name = 'RedisReplyError';

  constructor(
    /** The script or command whose reply it was (`budget reserve`). */
    readonly script: string,
    expected: string,
  ) {
    super(`the ${script} script answered something other than ${expected}`);
  }
}

/** A reply of exactly 0 or 1, as a boolean. */
export function replyFlag(reply: unknown, script: string): boolean {
  if (reply === 1) return true;
  if (reply === 0) return false;
  throw new RedisReplyError(script, '0 or 1');
}

/**
 * The first `length` entries of an array reply, each a safe integer (past 2^53 a double no longer
 * counts each unit, and Lua's `1e308` arrives as one) of at least `min`; a script
 * may answer more after them, read by whoever knows what they are.
 */
export function replyIntegers(reply: unknown, length: number, script: string, min = 0): number[] {
  if (!Array.isArray(reply) || reply.length < length) {
    throw new RedisReplyError(script, `a list of at least ${length} integers`);
  }
  const integers = reply.slice(0, length) as unknown[];
  for (const value of integers) {
    if (!(Number.isSafeInteger(value) && (value as number) >= min)) {
      throw new RedisReplyError(script, `a list of integers of at least ${min}`);
    }
  }
  return integers as number[];
}

/** Entry `index` of an array reply when it is a safe integer of at least `min`; else the typed error. */
export function replyIntegerAt(reply: unknown, index: number, script: string, min = 0): number {
  const value = Array.isArray(reply) ? (reply as unknown[])[index] : undefined;
  if (!(Number.isSafeInteger(value) && (value as number) >= min)) {
    throw new RedisReplyError(script, `an integer of at least ${min} at position ${index + 1}`);
  }
  return value as number;
}
