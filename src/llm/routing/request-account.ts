import { type BudgetGate, type BudgetReservation } from '../../budget';
import { type Clock, isPromiseLike, LeaseKeeper, type LeaseLoss, ResilienceError } from '../../common';
import type { RateLimiter } from '../../rate-limit';
import type { ChatUsage } from '../chat.types';
import { costMicros, type TokenUsage, worstCaseMicros } from '../pricing';
import { type BilledUsage, billedUsage, type UsageRejection } from './billed-usage';
import type { LlmTarget } from './llm-route';

/** What one request accounts against, and how much it may use per attempt. */
export interface RequestAccountSettings {
  tenant: string;
  budget: BudgetGate;
  limiter: RateLimiter;
  clock: Clock;
  /** The cap on each choice's output that every attempt sends. */
  outputCap: number;
  /** Upper bound of the prompt, in tokens. */
  inputTokens: number;
  /** Output tokens an attempt may be billed at most: the cap, times the choices asked for. */
  outputTokens: number;
  /**
   * How long an attempt's hold lasts unrenewed (`leaseLifetimeMs`): what the reservation of a
   * process that died outlives it by. While the process lives, the hold is renewed until the
   * attempt settles, however long it runs.
   */
  holdMs: number;
  /** Tokens the admission took already for the first attempt (0 when it took none). */
  tokensTakenAtAdmission: number;
  /** Told of each count of a provider's usage that was not charged as given (never its value). */
  onUsageRejected?: (target: LlmTarget, rejection: UsageRejection) => void;
}

/**
 * What one attempt holds until it settles: its worst case in the budget, kept (renewed) for as
 * long as the attempt runs. Settled exactly once, by the account.
 */
export class AttemptHold {
  private keeper: LeaseKeeper | undefined;
  private lost: ResilienceError | undefined;
  private stopAttempt: ((reason: ResilienceError) => void) | undefined;
  /** Set once the account charged or released it. */
  settled = false;

  constructor(
    readonly target: LlmTarget,
    readonly reservation: BudgetReservation | undefined,
  ) {}

  /**
   * Stops the attempt this hold pays for if the hold cannot be kept (the budget store lost it,
   * or could not be reached for most of its lifetime): spending on money no longer held would
   * let concurrent requests pass the cap. At once if it was lost already.
   */
  stopIfLost(stop: (reason: ResilienceError) => void): void {
    if (this.lost) stop(this.lost);
    else this.stopAttempt = stop;
  }

  /**
   * Starts renewing the reservation, each renewal for `holdMs`, until {@link release} (called by
   * the account as it settles). A hold without a reservation has nothing to renew.
   */
  startRenewing(clock: Clock, budget: BudgetGate, holdMs: number): void {
    const reservation = this.reservation;
    if (!reservation) return;
    this.keeper = new LeaseKeeper(
      clock,
      holdMs,
      (ttlMs) => budget.renew(reservation, ttlMs),
      (loss) => this.lose(loss),
    );
  }

  /** Ends the renewals: the hold is being settled. */
  release(): void {
    this.settled = true;
    this.keeper?.stop();
    this.stopAttempt = undefined;
  }

  private lose(loss: LeaseLoss): void {
    const why = loss === 'gone' ? 'the budget store no longer holds it' : 'the budget store could not be reached';
    this.lost = new ResilienceError('unavailable', `this request's budget hold could not be kept: ${why}`);
    this.stopAttempt?.(this.lost);
  }
}

/**
 * The money and tokens of one LLM request, attempt by attempt. Before an attempt its worst case
 * is held: the budget at that target's price (input estimate + output cap) and, from the second
 * attempt on, as many tokens again from the tokens-per-minute bucket (the first attempt's were
 * taken when the request was admitted). The hold is kept, renewed, for as long as the attempt
 * runs (a stream flows past any deadline). After it, the real usage is charged and the rest
 * freed, so no number of concurrent requests, retries or failovers can spend past a cap. An
 * attempt that cannot be held is not made, and one whose hold is lost is stopped.
 *
 * What an answer costs is its usage within what its hold covered ({@link billedUsage}): a
 * provider's count that is not one, or more than the request could use, never charges past the
 * hold, and each is reported (`onUsageRejected`).
 *
 * What a failed attempt costs: one that timed out or was stopped after its prompt went out had
 * sent it, which a provider bills, so it is charged the input estimate; one the provider refused
 * or failed, or that never left the pool's queue, answers nothing billable and costs nothing.
 */
export class RequestAccount {
  readonly outputCap: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  private readonly settings: RequestAccountSettings;
  private tokensTaken: number;
  private tokensUsed = 0;
  private spentMicros = 0;
  private attempts = 0;

  constructor(settings: RequestAccountSettings) {
    this.settings = settings;
    this.outputCap = settings.outputCap;
    this.inputTokens = settings.inputTokens;
    this.outputTokens = settings.outputTokens;
    this.tokensTaken = settings.tokensTakenAtAdmission;
  }

  /** The tokens one attempt may use at most. */
  get worstCaseTokens(): number {
    return this.inputTokens + this.outputTokens;
  }

  /** What the request has cost so far, in micro-dollars. */
  get costMicros(): number {
    return this.spentMicros;
  }

  /** Holds an attempt's worst case, or refuses it (`budget_exceeded`, `rate_limited`). */
  async hold(target: LlmTarget): Promise<AttemptHold> {
    const { tenant, limiter, budget, clock, holdMs } = this.settings;
    this.attempts++;
    if (this.attempts > 1) {
      const taking = limiter.takeTokens(tenant, this.worstCaseTokens);
      // Only what was really taken is given back later: shadow mode and a store that failed open take nothing.
      if (isPromiseLike(taking) ? await taking : taking) this.tokensTaken += this.worstCaseTokens;
    }
    let reservation: BudgetReservation | undefined;
    if (target.price) {
      const reserving = budget.reserveMicros(
        tenant,
        worstCaseMicros(target.price, this.inputTokens, this.outputTokens),
        holdMs,
      );
      if (reserving) reservation = isPromiseLike(reserving) ? await reserving : reserving;
    }
    const hold = new AttemptHold(target, reservation);
    hold.startRenewing(clock, budget, holdMs);
    return hold;
  }

  /**
   * Charges an attempt that answered with `usage` (a stream: what it streamed, cut or whole): its
   * {@link billedUsage}, each count it did not take as given reported.
   */
  charge(hold: AttemptHold, usage: ChatUsage): Promise<void> | undefined {
    const billed = this.billed(usage);
    for (const rejection of billed.rejections) this.settings.onUsageRejected?.(hold.target, rejection);
    this.tokensUsed += billed.usage.prompt_tokens + billed.usage.completion_tokens;
    return this.settle(hold, billed.tokens);
  }

  /**
   * `usage` as an attempt of this request is charged for it, for its client to see: the
   * provider's own object when all of it was sane.
   */
  billedUsage(usage: ChatUsage): ChatUsage {
    return this.billed(usage).usage;
  }

  /** What `usage` costs at `target`'s price, in micro-dollars, without charging it. */
  usageMicros(target: LlmTarget, usage: ChatUsage): number {
    return target.price ? costMicros(target.price, this.billed(usage).tokens) : 0;
  }

  /**
   * Charges an attempt that failed: its prompt if it went out (`promptSent`: its request left
   * the pool's queue) and the failure says the provider kept it (a timeout, a stop), else nothing.
   */
  failed(hold: AttemptHold, failure: ResilienceError, promptSent: boolean): Promise<void> | undefined {
    const billed = promptSent && (failure.kind === 'timeout' || failure.kind === 'stopped');
    if (billed) this.tokensUsed += this.inputTokens;
    return this.settle(hold, { inputTokens: billed ? this.inputTokens : 0, outputTokens: 0 });
  }

  /** Frees the hold of an attempt that was never made: it cost nothing. */
  released(hold: AttemptHold): Promise<void> | undefined {
    return this.settle(hold, { inputTokens: 0, outputTokens: 0 });
  }

  /** Gives back the tokens taken ahead and not used; call once, when the request is over. */
  settleTokens(): Promise<void> | undefined {
    return this.settings.limiter.settleTokens(this.settings.tenant, this.tokensTaken, this.tokensUsed);
  }

  private billed(usage: ChatUsage): BilledUsage {
    return billedUsage(usage, { promptTokens: this.inputTokens, completionTokens: this.outputTokens });
  }

  private settle(hold: AttemptHold, usage: TokenUsage): Promise<void> | undefined {
    if (hold.settled) throw new Error('an attempt hold was settled twice');
    hold.release();
    const micros = hold.target.price ? costMicros(hold.target.price, usage) : 0;
    this.spentMicros += micros;
    return hold.reservation ? this.settings.budget.settleMicros(hold.reservation, micros) : undefined;
  }
}
