import type { Awaitable } from '../common';

/** A tenant's money in one budget period, in integer micro-dollars (1 USD = 1,000,000). */
export interface BudgetUsage {
  spentMicros: number;
  /** Held by reservations not settled yet and not lapsed. */
  reservedMicros: number;
}

/**
 * Why a reserve was refused. `cap`: what is spent leaves no room for the amount, whatever the
 * reservations in flight do. `held`: the amount would fit but for the reservations in flight,
 * so room may come back as soon as one of them settles or lapses.
 */
export type ReserveRefusal =
  | { ok: false; cause: 'cap' }
  | {
      ok: false;
      cause: 'held';
      /** Milliseconds of the store's time until the earliest reservation held lapses, above 0. */
      nextLapseInMs: number;
    };

export type ReserveResult = ({ ok: true } | ReserveRefusal) & BudgetUsage;

/**
 * USD budgets as whole decisions (one Redis script each). `period` names the budget period
 * (`day:2026-11-29`, `month:2026-11`, UTC); every reservation has an id and lapses after its
 * TTL, so the reservations of a replica that died are reclaimed. The memory store answers at
 * once, the Redis store with a promise.
 */
export interface BudgetStore {
  /**
   * Reserves `amountMicros` of the tenant's `capMicros` for `period` if spent + reserved +
   * amount stays within the cap, atomically: concurrent calls can never overspend it. A
   * refusal says whether spent + amount alone is over the cap (`cap`) or only the reservations
   * held stand in the way (`held`, with when the earliest of them lapses).
   */
  reserve(
    tenant: string,
    period: string,
    capMicros: number,
    reservationId: string,
    amountMicros: number,
    ttlMs: number,
  ): Awaitable<ReserveResult>;
  /**
   * Ends a reservation: charges `actualMicros` (0 releases it all; more than reserved is
   * charged as it is) and frees the rest. Settling a reservation that is gone (settled
   * already, or lapsed) charges nothing and answers false, so a retried settle never charges
   * twice; reservation TTLs must outlast the calls they cover.
   */
  settle(tenant: string, period: string, reservationId: string, actualMicros: number): Awaitable<boolean>;
  /**
   * Keeps a reservation that still holds for `ttlMs` more from now (it never lapses earlier than
   * it would have), its amount unchanged. Answers false, and creates nothing, when it is gone:
   * settled, lapsed (even if not yet swept) or never made. `ttlMs` is checked and rounded up as a
   * reserve's is (a RangeError otherwise).
   */
  renew(tenant: string, period: string, reservationId: string, ttlMs: number): Awaitable<boolean>;
  read(tenant: string, period: string): Awaitable<BudgetUsage>;
}

/** Injection token of the {@link BudgetStore}. */
export const BudgetStore = Symbol('BudgetStore');
