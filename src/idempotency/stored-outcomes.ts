import { ResilienceError } from '../common';
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
