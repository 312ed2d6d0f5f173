import type { StoredOutcome } from './idempotency.store';

/**
 * What a store keeps of a finished outcome: its JSON, or nothing when the JSON is larger than
 * `maxEntryBytes` (or cannot be written: a code tool's result with a BigInt or a cycle). `bytes`
 * is the UTF-8 length, an upper bound of what V8 holds for the string.
 */
export function keptOutcome(
  outcome: StoredOutcome,
  maxEntryBytes: number,
): { json: string; bytes: number } | undefined {
  let json: string;
  try {
    json = JSON.stringify(outcome);
  } catch {
    return undefined;
  }
  // A string's UTF-8 length is at least its length: most outcomes over the bound are refused unmeasured.
  if (json.length > maxEntryBytes) return undefined;
  const bytes = Buffer.byteLength(json, 'utf8');
  return bytes <= maxEntryBytes ? { json, bytes } : undefined;
}

/**
 * What a key answers once its call ran but its outcome was not kept (too large, or dropped to keep
 * the store within its bytes): `idempotency_conflict`, as the key cannot serve this request. The
 * call is never run a second time under the key: a client that wants it again uses a new key.
 */
export function notKeptOutcome(attempts: number): StoredOutcome {
  return {
    ok: false,
    kind: 'idempotency_conflict',
    message:
      "this Idempotency-Key's call has run, but its outcome was too large to keep and is not replayed; " +
      'a new key runs the call again',
    attempts,
  };
}
