import type { ErrorKind } from '../common';

/** How a call with an idempotency key ended, as stored and replayed. JSON-serialisable. */
export type StoredOutcome =
  | { ok: true; result: unknown; attempts: number; pool: 'normal' | 'isolated' }
  | { ok: false; kind: ErrorKind; message: string; attempts: number; retryAfterMs?: number };

/** What a key holds when a call claims it. */
export type IdempotencyClaim =
  /** Nobody has it: the caller runs the call and must `complete` or `release` with the token. */
  | { status: 'claimed'; token: string }
  /** A call with the same key and arguments runs now. */
  | { status: 'in_flight' }
  /** A call with the same key and arguments ended within the retention window. */
  | { status: 'completed'; outcome: StoredOutcome }
  /** The key was used with other arguments. */
  | { status: 'conflict' };

/**
 * Idempotency records, each a whole decision (claim, complete, release, renew) so that a Redis
 * store answers each with one script. Keys arrive already scoped by tenant and tool.
 */
export interface IdempotencyStore {
  /**
   * Claims `key` for a call whose arguments have `fingerprint`, for at most `leaseMs`: a claim
   * whose lease passed (its replica died) may be taken over. `tenant` owns the key: its outcome
   * counts against that tenant's bytes.
   *
   * `token` names this claim: made once per claim (`uniqueIds.next()`), and sent again unchanged
   * when the same claim is re-sent (a client library re-sending a command whose connection closed).
   * A claim whose token is the record's own, in flight and live, is answered `claimed` with it:
   * the claim that wrote the record is told it holds it, not that someone else does. Without a
   * token the store makes one.
   */
  claim(key: string, fingerprint: string, leaseMs: number, tenant: string, token?: string): Promise<IdempotencyClaim>;
  /**
   * Stores the outcome of the claimed call for `retentionMs`; does nothing if the claim was lost.
   * An outcome larger than the store keeps is not stored, but the key stays finished: a claim then
   * answers `completed` with an `idempotency_conflict` failure (`notKeptOutcome`), never `claimed`.
   */
  complete(key: string, token: string, outcome: StoredOutcome, retentionMs: number): Promise<void>;
  /** Forgets the claim of a call that never started: nothing is stored. */
  release(key: string, token: string): Promise<void>;
  /**
   * Keeps the in-flight claim of `token` for `leaseMs` more from now (never less than it held
   * already). False when the claim is no longer this token's in flight: completed, released,
   * lapsed (even if nobody took it over yet) or taken over.
   * Rejects with a RangeError unless `leaseMs` is a finite number above 0.
   */
  renew(key: string, token: string, leaseMs: number): Promise<boolean>;
}

/** Injection token of the {@link IdempotencyStore}. */
export const IdempotencyStore = Symbol('IdempotencyStore');

/**
 * Checks a lease asked of {@link IdempotencyStore.renew}.
 * @throws RangeError unless `leaseMs` is a finite number of milliseconds above 0.
 */
export function assertLeaseMs(leaseMs: number): void {
  if (typeof leaseMs !== 'number' || !Number.isFinite(leaseMs) || leaseMs <= 0) {
    throw new RangeError(`leaseMs must be a finite number of milliseconds above 0, got ${String(leaseMs)}`);
  }
}
