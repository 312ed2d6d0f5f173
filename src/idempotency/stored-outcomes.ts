import { isErrorKind, ResilienceError } from '../common';
import type { StoredOutcome } from './idempotency.store';

/** A failure as the idempotency store keeps it, to answer again for the retention window. */
export function toStored(error: ResilienceError): StoredOutcome {
  const { kind, message, attempts, retryAfterMs } = error;
  return retryAfterMs === undefined
    ? { ok: false, kind, message, attempts }
    : { ok: false, kind, message, attempts, retryAfterMs };
}

/** The failure a stored outcome answers with. */
export function fromStored(outcome: Extract<StoredOutcome, { ok: false }>): ResilienceError {
  const { kind, message, attempts, retryAfterMs } = outcome;
  return new ResilienceError(kind, message, { attempts, retryAfterMs });
}

/**
 * A stored outcome from its JSON, when it has the shape this version writes; undefined for
 * anything else (a record another version or program wrote, a damaged one), which the store
 * answers as its own failure rather than replay as a call's answer.
 */
export function storedOutcomeOf(json: string): StoredOutcome | undefined {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const outcome = value as Record<string, unknown>;
  if (!isCount(outcome.attempts)) return undefined;
  if (outcome.ok === true) {
    return outcome.pool === 'normal' || outcome.pool === 'isolated' ? (outcome as StoredOutcome) : undefined;
  }
  if (outcome.ok !== false || !isErrorKind(outcome.kind) || typeof outcome.message !== 'string') return undefined;
  const { retryAfterMs } = outcome;
  if (
    retryAfterMs !== undefined &&
    !(typeof retryAfterMs === 'number' && retryAfterMs >= 0 && retryAfterMs < Infinity)
  ) {
    return undefined;
  }
  return outcome as StoredOutcome;
}

function isCount(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}
