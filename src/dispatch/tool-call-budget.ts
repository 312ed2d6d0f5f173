import type { BudgetGate, BudgetReservation } from '../budget';
import { type Awaitable, isPromiseLike, type ResilienceError } from '../common';
import type { AttemptBudget } from './call-executor';

/** How long one attempt's money may stay held, and what a refusal's Retry-After may say at most. */
export interface ToolCallBudgetTimes {
  /** The first attempt's hold: its wait for a lane slot, the attempt, and a margin. */
  firstHoldMs: number;
  /** A retry's hold: the attempt and a margin. */
  retryHoldMs: number;
  /** The longest Retry-After of a refusal caused only by money held by calls in flight. */
  retryAfterMaxMs: number;
}

/**
 * The money of one tool call, attempt by attempt: before each attempt its `costUsd` is held in
 * the tenant's budget, and when the attempt ends it is charged (or released, when the attempt
 * never ran). A call holds one attempt's cost at a time, and only while that attempt may run,
 * so concurrent calls share a cap by what they may spend next, not by their worst case.
 *
 * What an attempt costs: `costUsd` once it reached the tool, whatever its outcome, except one
 * denied egress before it connected anywhere, which costs nothing.
 */
export class ToolCallBudget implements AttemptBudget {
  private held: BudgetReservation | undefined;

  /** The budget of a call whose first attempt's money `first` holds already. */
  constructor(
    private readonly gate: BudgetGate,
    private readonly tenant: string,
    private readonly costUsd: number,
    private readonly times: ToolCallBudgetTimes,
    first: BudgetReservation,
  ) {
    this.held = first;
  }

  holdNext(): Awaitable<boolean> {
    let reserving: Awaitable<BudgetReservation> | undefined;
    try {
      reserving = this.gate.reserve(this.tenant, this.costUsd, this.times.retryHoldMs);
    } catch {
      // Refused, or the store is down: either way the retry cannot be paid for.
      return false;
    }
    // Nothing to hold (no cap): caps do not change while the service runs, so this does not
    // happen once a first attempt was held; were it to, the attempt needs no money.
    if (!reserving) return true;
    if (!isPromiseLike(reserving)) return this.recordHeld(reserving);
    return Promise.resolve(reserving).then(
      (reservation) => this.recordHeld(reservation),
      () => false,
    );
  }

  settle(ran: boolean, failure?: ResilienceError): Promise<void> | undefined {
    const reservation = this.held;
    if (!reservation) return undefined;
    this.held = undefined;
    const charged = ran && failure?.kind !== 'egress_denied';
    return this.gate.settle(reservation, charged ? this.costUsd : 0);
  }

  /**
   * Holds the first attempt's money again (for the first attempt's whole lifetime), for a call
   * that gave it back while it waited on another replica's run of its key and now runs it
   * itself. Throws or rejects as the gate refuses (`budget_exceeded`, `unavailable`).
   */
  holdFirstAgain(): Awaitable<void> {
    const { firstHoldMs, retryAfterMaxMs } = this.times;
    const reserving = this.gate.reserve(this.tenant, this.costUsd, firstHoldMs, retryAfterMaxMs);
    if (!reserving) return undefined;
    if (!isPromiseLike(reserving)) {
      this.recordHeld(reserving);
      return undefined;
    }
    return Promise.resolve(reserving).then((reservation) => {
      this.recordHeld(reservation);
    });
  }

  /** Releases what is held, if anything: the call ended before its attempt ran. */
  release(): Promise<void> | undefined {
    return this.settle(false);
  }

  /** Records a retry's reservation as the money the call holds now, settled when the retry ends: it may run. */
  private recordHeld(reservation: BudgetReservation): true {
    this.held = reservation;
    return true;
  }
}
