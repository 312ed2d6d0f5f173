import type { Awaitable } from '../common';

/** A tenant's money in one budget period, in integer micro-dollars (1 USD = 1,000,000). */
export interface BudgetUsage {
  spentMicros: number;
  /** Held by reservations not settled yet and not lapsed. */
  reservedMicros: number;
}

export type ReserveResult = ({ ok: true } | { ok: false }) & BudgetUsage;

/**
 * USD budgets as whole decisions (one Redis script each). `period` names the budget period
 * (`day:2026-11-29`, `month:2026-11`, UTC); every reservation has an id and lapses after its
 * TTL, so the reservations of a replica that died are reclaimed. The memory store answers at
 * once, the Redis store with a promise.
 */
export interface BudgetStore {
  /**
   * Reserves `amountMicros` of the tenant's `capMicros` for `period` if spent + reserved +
   * amount stays within the cap, atomically: concurrent calls can never overspend it.
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
  read(tenant: string, period: string): Awaitable<BudgetUsage>;
}

/** Injection token of the {@link BudgetStore}. */
export const BudgetStore = Symbol('BudgetStore');
