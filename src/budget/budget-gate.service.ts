import { Inject, Injectable } from '@nestjs/common';
import { type Awaitable, CLOCK, type Clock, isPromiseLike, ResilienceError, uniqueIds } from '../common';
import { BUDGET_MODULE_OPTIONS, type BudgetModuleOptions } from './budget.module-definition';
import { type BudgetPeriod, budgetPeriod } from './budget-period';
import { BudgetStore, type ReserveResult } from './budget.store';
import { microsToUsd, usdToMicros } from './money';

const MICROS_CACHE_SIZE = 1_000;

/** A held part of a tenant's budget, to settle when its call ends. */
export interface BudgetReservation {
  tenant: string;
  period: string;
  id: string;
  amountMicros: number;
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
 * Step 5 and its settlement (step 10): before a call, reserve its cost within the tenant's
 * cap for the current period (UTC day or month), atomically, so a burst can never overspend;
 * after it, charge what was spent and free the rest. Budgets fail closed: with the store down,
 * calls that cost money are refused `unavailable`.
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
   * `usdToMicros` of amounts that come from the config (costs × attempts, caps): few distinct
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
   * Reserves `costUsd` for a call of `tenant`, or refuses it (throws, or rejects when the store
   * answers later). Undefined (not even a promise) when nothing needs reserving: no cap, or a
   * call that costs nothing.
   */
  reserve(tenant: string, costUsd: number, ttlMs: number): Awaitable<BudgetReservation> | undefined {
    if (!(costUsd > 0) || this.capUsd(tenant) === undefined) return undefined;
    return this.reserveMicros(tenant, this.micros(costUsd), ttlMs);
  }

  /**
   * As {@link reserve}, for an amount already in integer micro-dollars (the LLM route's, worked
   * out from token counts and prices, which the USD conversion cache would not help).
   */
  reserveMicros(tenant: string, amountMicros: number, ttlMs: number): Awaitable<BudgetReservation> | undefined {
    const capUsd = this.capUsd(tenant);
    if (capUsd === undefined || !(amountMicros > 0)) return undefined;
    const period = this.currentPeriod();
    const reservation = { tenant, period: period.key, id: uniqueIds.next(), amountMicros };
    let reserved: Awaitable<ReserveResult>;
    try {
      reserved = this.store.reserve(
        tenant,
        period.key,
        this.micros(capUsd),
        reservation.id,
        reservation.amountMicros,
        ttlMs,
      );
    } catch (error) {
      throw storeFailure(error);
    }
    if (isPromiseLike(reserved)) {
      return Promise.resolve(reserved).then(
        (result) => this.held(reservation, period, result),
        (error: unknown) => {
          throw storeFailure(error);
        },
      );
    }
    return this.held(reservation, period, reserved);
  }

  /** The reservation, if the store held it; a spent budget refuses the call until the period ends. */
  private held(reservation: BudgetReservation, period: BudgetPeriod, result: ReserveResult): BudgetReservation {
    if (result.ok) return reservation;
    // Refused when what is left (spent and held by calls in flight counted) cannot cover this
    // call's worst case: "spent" would be untrue while the budget still has money left.
    const which = this.config.budgets.period === 'day' ? 'daily' : 'monthly';
    throw new ResilienceError('budget_exceeded', `the ${which} budget of this tenant cannot cover this call`, {
      retryAfterMs: Math.max(1, period.resetsAt - this.clock.wallNow()),
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
function storeFailure(error: unknown): ResilienceError {
  if (error instanceof RangeError) return new ResilienceError('internal', 'internal error', { cause: error });
  return new ResilienceError('unavailable', 'the budget store is unavailable', { cause: error });
}
