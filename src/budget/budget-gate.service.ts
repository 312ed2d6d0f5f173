import { Inject, Injectable } from '@nestjs/common';
import { type Awaitable, CLOCK, type Clock, isPromiseLike, ResilienceError, uniqueIds } from '../common';
import { BUDGET_MODULE_OPTIONS, type BudgetModuleOptions } from './budget.module-definition';
import { type BudgetPeriod, budgetPeriod } from './budget-period';
import { BudgetStore, type ReserveRefusal, type ReserveResult } from './budget.store';
import { microsToUsd, usdToMicros } from './money';

const MICROS_CACHE_SIZE = 1_000;

/** The shortest Retry-After of a refusal caused by reservations in flight: the header counts whole seconds. */
const MIN_IN_FLIGHT_RETRY_AFTER_MS = 1_000;

/** A held part of a tenant's budget, to settle when the attempt (or request) it covers ends. */
export interface BudgetReservation {
  tenant: string;
  period: string;
  id: string;
  amountMicros: number;
}

/** A reservation to ask the store for, and what its answer is read against. */
export interface ReservationRequest {
  reservation: BudgetReservation;
  capMicros: number;
  /** How long the reservation holds, should nobody settle it. */
  ttlMs: number;
  budgetPeriod: BudgetPeriod;
  /** Bounds the Retry-After of a refusal that only reservations in flight cause. */
  retryAfterMaxMs: number | undefined;
}

/** A tenant's budget as `GET /v1/admin/budgets/{tenant}` shows it. */
export interface BudgetView {
  capUsd: number | null;
  spentUsd: number;
  reservedUsd: number;
  period: string;
  resetsAt: string;
}

/**
 * Step 5 and its settlements: before each attempt of a call, reserve what it may cost within
 * the tenant's cap for the current period (UTC day or month), atomically, so a burst can never
 * overspend; after it, charge what was spent and free the rest. Budgets fail closed: with the
 * store down, calls that cost money are refused `unavailable`.
 */
@Injectable()
export class BudgetGate {
  /** Micro-dollars charged so far, by tenant, for metrics (money is never summed as floats). */
  readonly spentMicros = new Map<string, number>();
  private readonly microsOf = new Map<number, number>();
  /** The period of the latest call: the same for every call until midnight UTC. */
  private period: BudgetPeriod | undefined;

  constructor(
    @Inject(BudgetStore) private readonly store: BudgetStore,
    @Inject(BUDGET_MODULE_OPTIONS) private readonly config: BudgetModuleOptions,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * `usdToMicros` of amounts that come from the config (costs, caps): few distinct
   * values, converted once each instead of on every call (the exact conversion is not cheap).
   */
  private micros(usd: number): number {
    let micros = this.microsOf.get(usd);
    if (micros === undefined) {
      micros = usdToMicros(usd);
      if (this.microsOf.size < MICROS_CACHE_SIZE) this.microsOf.set(usd, micros);
    }
    return micros;
  }

  /** The period the wall clock is in now; worked out again only when the clock leaves the last one. */
  private currentPeriod(): BudgetPeriod {
    const now = this.clock.wallNow();
    const last = this.period;
    if (last && now >= last.startsAt && now < last.resetsAt) return last;
    this.period = budgetPeriod(this.config.budgets.period, now);
    return this.period;
  }

  /** The tenant's cap in USD, or undefined when it has none. */
  capUsd(tenant: string): number | undefined {
    const { tenants, defaultUsd } = this.config.budgets;
    return Object.hasOwn(tenants, tenant) ? tenants[tenant] : defaultUsd;
  }

  /**
   * Reserves `costUsd` for `tenant` for at most `ttlMs`, or refuses it (throws, or rejects when
   * the store answers later) `budget_exceeded`. Undefined (not even a promise) when nothing
   * needs reserving: no cap, or a cost of nothing. `retryAfterMaxMs` bounds the Retry-After of
   * a refusal that only reservations in flight cause (see {@link refusal}).
   */
  reserve(
    tenant: string,
    costUsd: number,
    ttlMs: number,
    retryAfterMaxMs?: number,
  ): Awaitable<BudgetReservation> | undefined {
    const request = this.request(tenant, costUsd, ttlMs, retryAfterMaxMs);
    return request && this.reserveRequested(request);
  }

  /**
   * As {@link reserve}, for an amount already in integer micro-dollars (the LLM route's, worked
   * out from token counts and prices, which the USD conversion cache would not help).
   */
  reserveMicros(
    tenant: string,
    amountMicros: number,
    ttlMs: number,
    retryAfterMaxMs?: number,
  ): Awaitable<BudgetReservation> | undefined {
    const request = this.requestMicros(tenant, amountMicros, ttlMs, retryAfterMaxMs);
    return request && this.reserveRequested(request);
  }

  /** Asks the store for a reservation worked out by {@link request}; refuses as {@link reserve} does. */
  reserveRequested(request: ReservationRequest): Awaitable<BudgetReservation> {
    const { reservation } = request;
    let reserved: Awaitable<ReserveResult>;
    try {
      reserved = this.store.reserve(
        reservation.tenant,
        reservation.period,
        request.capMicros,
        reservation.id,
        reservation.amountMicros,
        request.ttlMs,
      );
    } catch (error) {
      throw storeFailure(error);
    }
    if (isPromiseLike(reserved)) {
      return Promise.resolve(reserved).then(
        (result) => this.answered(request, result),
        (error: unknown) => {
          throw storeFailure(error);
        },
      );
    }
    return this.answered(request, reserved);
  }

  /**
   * What {@link reserve} would ask the store for; undefined when nothing needs reserving. Ask
   * with {@link reserveRequested}, or, for a store that decides it together with something else
   * (the call admission's script), hand its answer to {@link answered} and its failure to
   * {@link storeFailure}.
   */
  request(tenant: string, costUsd: number, ttlMs: number, retryAfterMaxMs?: number): ReservationRequest | undefined {
    if (!(costUsd > 0)) return undefined;
    return this.requestMicros(tenant, this.micros(costUsd), ttlMs, retryAfterMaxMs);
  }

  private requestMicros(
    tenant: string,
    amountMicros: number,
    ttlMs: number,
    retryAfterMaxMs: number | undefined,
  ): ReservationRequest | undefined {
    const capUsd = this.capUsd(tenant);
    if (capUsd === undefined || !(amountMicros > 0)) return undefined;
    const period = this.currentPeriod();
    return {
      reservation: { tenant, period: period.key, id: uniqueIds.next(), amountMicros },
      capMicros: this.micros(capUsd),
      ttlMs,
      budgetPeriod: period,
      retryAfterMaxMs,
    };
  }

  /** The reservation the store granted, or throws the refusal `budget_exceeded`. */
  answered(request: ReservationRequest, result: ReserveResult): BudgetReservation {
    if (result.ok) return request.reservation;
    throw this.refusal(result, request.budgetPeriod, request.retryAfterMaxMs);
  }

  /**
   * `budget_exceeded`, with a Retry-After that says when trying again may help. When what is
   * spent leaves no room, not before the period ends. When only money held by calls in flight
   * is in the way, as soon as the earliest of them can have settled: its reservation lapses by
   * then at the latest, and it usually settles much sooner, so the wait is bounded by
   * `retryAfterMaxMs` (the caller's idea of how long one attempt runs) and is at least a second
   * (Retry-After counts whole seconds); never past the period's end, which frees everything.
   */
  private refusal(result: ReserveRefusal, period: BudgetPeriod, retryAfterMaxMs = Infinity): ResilienceError {
    const which = this.config.budgets.period === 'day' ? 'daily' : 'monthly';
    const untilResetMs = Math.max(1, period.resetsAt - this.clock.wallNow());
    if (result.cause === 'held') {
      const waitMs = Math.max(MIN_IN_FLIGHT_RETRY_AFTER_MS, Math.min(result.nextLapseInMs, retryAfterMaxMs));
      return new ResilienceError(
        'budget_exceeded',
        `the ${which} budget of this tenant is held by calls in flight; retry once they settle`,
        { retryAfterMs: Math.min(waitMs, untilResetMs) },
      );
    }
    // "Spent" would be untrue while the budget has money left that this amount exceeds.
    return new ResilienceError('budget_exceeded', `the ${which} budget of this tenant cannot cover this call`, {
      retryAfterMs: untilResetMs,
    });
  }

  /**
   * Charges `actualUsd` of a reservation and frees the rest; never throws or rejects (the call
   * is over). Undefined once settled at once (the memory store).
   */
  settle(reservation: BudgetReservation, actualUsd: number): Promise<void> | undefined {
    let actualMicros: number;
    try {
      actualMicros = this.micros(Math.max(0, actualUsd));
    } catch {
      return undefined;
    }
    return this.settleMicros(reservation, actualMicros);
  }

  /** As {@link settle}, for an amount in integer micro-dollars. */
  settleMicros(reservation: BudgetReservation, actualMicros: number): Promise<void> | undefined {
    let settled: Awaitable<boolean>;
    try {
      settled = this.store.settle(reservation.tenant, reservation.period, reservation.id, actualMicros);
    } catch {
      return undefined;
    }
    if (isPromiseLike(settled)) {
      return Promise.resolve(settled).then(
        (charged) => this.charged(reservation, actualMicros, charged),
        // The reservation lapses after its TTL; nothing more can be done for this call.
        () => undefined,
      );
    }
    this.charged(reservation, actualMicros, settled);
    return undefined;
  }

  /**
   * Keeps `reservation` held for `ttlMs` more from now (never less than it held already), for a
   * call that outlives its hold (a stream). False when it is gone (settled, lapsed): the call's
   * money is no longer held. A failing store throws, or rejects when the store answers later,
   * {@link storeFailure}, so a caller tells a reservation gone from a store down. The memory
   * store answers at once (no promise).
   */
  renew(reservation: BudgetReservation, ttlMs: number): Awaitable<boolean> {
    let renewed: Awaitable<boolean>;
    try {
      renewed = this.store.renew(reservation.tenant, reservation.period, reservation.id, ttlMs);
    } catch (error) {
      throw storeFailure(error);
    }
    if (!isPromiseLike(renewed)) return renewed;
    return Promise.resolve(renewed).then(undefined, (error: unknown) => {
      throw storeFailure(error);
    });
  }

  private charged(reservation: BudgetReservation, actualMicros: number, charged: boolean): void {
    if (!charged || actualMicros === 0) return;
    const { tenant } = reservation;
    this.spentMicros.set(tenant, (this.spentMicros.get(tenant) ?? 0) + actualMicros);
  }

  async view(tenant: string): Promise<BudgetView> {
    const period = this.currentPeriod();
    let usage;
    try {
      usage = await this.store.read(tenant, period.key);
    } catch (error) {
      throw storeFailure(error);
    }
    return {
      capUsd: this.capUsd(tenant) ?? null,
      spentUsd: microsToUsd(usage.spentMicros),
      reservedUsd: microsToUsd(usage.reservedMicros),
      period: period.key,
      resetsAt: new Date(period.resetsAt).toISOString(),
    };
  }
}

/** A store that is down is `unavailable` (budgets fail closed); a RangeError is our bug, `internal`. */
export function storeFailure(error: unknown): ResilienceError {
  if (error instanceof RangeError) return new ResilienceError('internal', 'internal error', { cause: error });
  return new ResilienceError('unavailable', 'the budget store is unavailable', { cause: error });
}
