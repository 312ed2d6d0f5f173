import { z } from 'zod';
import { parseRequestPart } from '../common';

/** 1-255 visible ASCII characters. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
const IDEMPOTENCY_KEY_RULE = 'Idempotency-Key must be 1-255 visible ASCII characters';

/** `Idempotency-Key` (a header, or a batch entry's `idempotencyKey`); a bad one is never echoed. */
export const idempotencyKeySchema = z
  .string({ error: IDEMPOTENCY_KEY_RULE })
  .regex(IDEMPOTENCY_KEY, { error: IDEMPOTENCY_KEY_RULE })
  .meta({ description: '1-255 visible ASCII characters (0x21-0x7e), scoped to the tenant and the tool.' });

/** The key must be 1-255 visible ASCII characters; a bad one is refused and never echoed. */
export function parseIdempotencyKey(header: unknown): string | undefined {
  if (header === undefined) return undefined;
  // The schema's own pattern first: a valid key costs one regex test, as the body's compiled check.
  if (typeof header === 'string' && IDEMPOTENCY_KEY.test(header)) return header;
  return parseRequestPart(idempotencyKeySchema, header);
}
