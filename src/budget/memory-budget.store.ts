import type { Clock } from '../common';
import type { BudgetStore, BudgetUsage, ReserveResult } from './budget.store';
import { assertMicros } from './money';
import { reservationTtlMs } from './reservation-ttl';

interface Reservation {
  amountMicros: number;
  /** Clock `now()` from which it no longer holds anything. */
  expiresAt: number;
}

/** One tenant's money in one period. */
interface PeriodEntry {
  spentMicros: number;
  /** Sum of the amounts in `reservations`, kept beside them so a decision need not add them up. */
  reservedMicros: number;
  reservations: Map<string, Reservation>;
  /** No reservation lapses before this (a lower bound: settling one does not raise it). */
  nextLapseAt: number;
  /**
   * `nextLapseAt` is exactly when the earliest reservation lapses. False once the reservation
   * lapsing then may have gone or been renewed; a refusal that must tell the earliest lapse then
   * looks again.
   */
  nextLapseExact: boolean;
}

/**
 * The embedded budget store: one process, each decision one synchronous block, answered at
 * once. Reservations
 * lapse on the injected clock's `now()`; lapsed ones are dropped whenever their entry is
 * touched (reserve, settle, renew, read).
 *
 * Memory stays bounded: a tenant keeps at most two periods, the one it reserved in last and the
 * one before it (so a call reserved just before midnight still settles in its own period); a
 * reserve that opens a third period drops the oldest. An entry with nothing spent and nothing
 * reserved is dropped at once, so reading an unknown tenant or period never creates one.
 */
export class MemoryBudgetStore implements BudgetStore {
  /** Tenant → period → entry; periods in the order they were opened. */
  private readonly tenants = new Map<string, Map<string, PeriodEntry>>();

  constructor(private readonly clock: Clock) {}

  reserve(
    tenant: string,
    period: string,
    capMicros: number,
    reservationId: string,
    amountMicros: number,
    ttlMs: number,
  ): ReserveResult {
    assertMicros(capMicros, 'capMicros');
    assertMicros(amountMicros, 'amountMicros');
    const wholeTtlMs = reservationTtlMs(reservationId, ttlMs);
    const now = this.clock.now();
    const entry = this.entry(tenant, period, now) ?? this.open(tenant, period);
    // Reserving an id that still holds replaces it, so a retried reserve never holds twice.
    const previous = entry.reservations.get(reservationId);
    const replaced = previous?.amountMicros ?? 0;
    if (entry.spentMicros + entry.reservedMicros - replaced + amountMicros > capMicros) {
      const refused = this.refusal(entry, capMicros, amountMicros, now);
      this.dropIfEmpty(tenant, period, entry);
      return refused;
    }
    const expiresAt = now + wholeTtlMs;
    entry.reservations.set(reservationId, { amountMicros, expiresAt });
    entry.reservedMicros += amountMicros - replaced;
    if (previous) this.forgetLapse(entry, previous);
    entry.nextLapseAt = Math.min(entry.nextLapseAt, expiresAt);
    const reserved = resultOf(true, entry);
    this.dropIfEmpty(tenant, period, entry);
    return reserved;
  }

  settle(tenant: string, period: string, reservationId: string, actualMicros: number): boolean {
    assertMicros(actualMicros, 'actualMicros');
    const entry = this.entry(tenant, period, this.clock.now());
    const reservation = entry?.reservations.get(reservationId);
    if (!entry || !reservation) return false;
    entry.reservations.delete(reservationId);
    entry.reservedMicros -= reservation.amountMicros;
    entry.spentMicros += actualMicros;
    this.forgetLapse(entry, reservation);
    this.dropIfEmpty(tenant, period, entry);
    return true;
  }

  renew(tenant: string, period: string, reservationId: string, ttlMs: number): boolean {
    const wholeTtlMs = reservationTtlMs(reservationId, ttlMs);
    const now = this.clock.now();
    const entry = this.entry(tenant, period, now);
    const reservation = entry?.reservations.get(reservationId);
    if (!entry || !reservation) return false;
    const expiresAt = now + wholeTtlMs;
    if (expiresAt > reservation.expiresAt) {
      this.forgetLapse(entry, reservation);
      reservation.expiresAt = expiresAt;
    }
    return true;
  }

  read(tenant: string, period: string): BudgetUsage {
    const entry = this.entry(tenant, period, this.clock.now());
    return entry ? usageOf(entry) : { spentMicros: 0, reservedMicros: 0 };
  }

  /** Periods held, over all tenants (for tests of the memory bound). */
  get periodCount(): number {
    let count = 0;
    for (const periods of this.tenants.values()) count += periods.size;
    return count;
  }

  /** The entry of a tenant's period with its lapsed reservations dropped, if it holds anything. */
  private entry(tenant: string, period: string, now: number): PeriodEntry | undefined {
    const entry = this.tenants.get(tenant)?.get(period);
    if (!entry || entry.nextLapseAt > now) return entry;
    let nextLapseAt = Infinity;
    for (const [id, reservation] of entry.reservations) {
      if (reservation.expiresAt <= now) {
        entry.reservations.delete(id);
        entry.reservedMicros -= reservation.amountMicros;
      } else {
        nextLapseAt = Math.min(nextLapseAt, reservation.expiresAt);
      }
    }
    entry.nextLapseAt = nextLapseAt;
    entry.nextLapseExact = true;
    return this.dropIfEmpty(tenant, period, entry) ? undefined : entry;
  }

  /**
   * Why `amountMicros` does not fit. Walks the reservations only when the earliest lapse is not
   * known exactly, which only a settle, a reserve again or a renew of the earliest one causes: a
   * burst of refusals walks them at most once between such changes.
   */
  private refusal(entry: PeriodEntry, capMicros: number, amountMicros: number, now: number): ReserveResult {
    const { spentMicros, reservedMicros } = entry;
    if (spentMicros + amountMicros > capMicros) return { ok: false, cause: 'cap', spentMicros, reservedMicros };
    if (!entry.nextLapseExact) {
      let nextLapseAt = Infinity;
      for (const reservation of entry.reservations.values()) {
        nextLapseAt = Math.min(nextLapseAt, reservation.expiresAt);
      }
      entry.nextLapseAt = nextLapseAt;
      entry.nextLapseExact = true;
    }
    // Reservations hold (the cap would fit without them), and none has lapsed: entry() dropped those.
    const nextLapseInMs = Math.max(1, Math.ceil(entry.nextLapseAt - now));
    return { ok: false, cause: 'held', nextLapseInMs, spentMicros, reservedMicros };
  }

  /**
   * A reservation's expiry is gone (settled, replaced, or renewed to later): it may have been
   * the one lapsing first. `nextLapseAt` stays a lower bound, as renewing only moves one later.
   */
  private forgetLapse(entry: PeriodEntry, gone: Reservation): void {
    if (entry.reservations.size === 0) {
      entry.nextLapseAt = Infinity;
      entry.nextLapseExact = true;
    } else if (gone.expiresAt <= entry.nextLapseAt) {
      entry.nextLapseExact = false;
    }
  }

  private open(tenant: string, period: string): PeriodEntry {
    let periods = this.tenants.get(tenant);
    if (!periods) {
      periods = new Map();
      this.tenants.set(tenant, periods);
    }
    // Keep the period opened last before this one; anything older is over.
    for (const old of periods.keys()) {
      if (periods.size < 2) break;
      periods.delete(old);
    }
    const entry: PeriodEntry = {
      spentMicros: 0,
      reservedMicros: 0,
      reservations: new Map(),
      nextLapseAt: Infinity,
      nextLapseExact: true,
    };
    periods.set(period, entry);
    return entry;
  }

  private dropIfEmpty(tenant: string, period: string, entry: PeriodEntry): boolean {
    if (entry.spentMicros > 0 || entry.reservations.size > 0) return false;
    const periods = this.tenants.get(tenant);
    periods?.delete(period);
    if (periods?.size === 0) this.tenants.delete(tenant);
    return true;
  }
}

/** One object, not a spread of the usage: this is on every budgeted call's path. */
function resultOf(ok: true, entry: PeriodEntry): ReserveResult {
  return { ok, spentMicros: entry.spentMicros, reservedMicros: entry.reservedMicros };
}

function usageOf(entry: PeriodEntry): BudgetUsage {
  return { spentMicros: entry.spentMicros, reservedMicros: entry.reservedMicros };
}
