import { type BudgetGate, type BudgetReservation } from '../../budget';
import { isPromiseLike, type ResilienceError } from '../../common';
import type { RateLimiter } from '../../rate-limit';
import type { ChatUsage } from '../chat.types';
import { costMicros, type TokenUsage, worstCaseMicros } from '../pricing';
import type { LlmTarget } from './llm-route';

/** What one attempt holds until it settles. */
export interface AttemptHold {
  readonly target: LlmTarget;
  readonly reservation: BudgetReservation | undefined;
}

/**
 * The money and tokens of one LLM request, attempt by attempt. Before an attempt its worst case
 * is held: the budget at that target's price (input estimate + output cap) and, from the second
 * attempt on, as many tokens again from the tokens-per-minute bucket (the first attempt's were
 * taken when the request was admitted). After it, the real usage is charged and the rest freed,
 * so no number of concurrent requests, retries or failovers can spend past a cap. An attempt
 * that cannot be held is not made.
 *
 * What a failed attempt costs: one that timed out or was stopped had sent its prompt, which a
 * provider bills, so it is charged the input estimate; one the provider refused or failed
 * answers nothing billable and costs nothing.
 */
export class RequestAccount {
  private tokensTaken: number;
  private tokensUsed = 0;
  private spentMicros = 0;
  private attempts = 0;

  constructor(
    /** The cap on each choice's output that every attempt sends. */
    readonly outputCap: number,
    private readonly tenant: string,
    private readonly budget: BudgetGate,
    private readonly limiter: RateLimiter,
    /** Upper bound of the prompt, in tokens. */
    readonly inputTokens: number,
    /** Output tokens an attempt may be billed at most: the cap, times the choices asked for. */
    readonly outputTokens: number,
    /** How long a reservation may outlive its request if this process dies. */
    private readonly holdMs: number,
    /** Tokens the admission took already for the first attempt. */
    tokensTakenAtAdmission: number,
  ) {
    this.tokensTaken = tokensTakenAtAdmission;
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
    this.attempts++;
    if (this.attempts > 1) {
      const taking = this.limiter.takeTokens(this.tenant, this.worstCaseTokens);
      if (taking) await taking;
      if (this.limiter.limitsTokens(this.tenant)) this.tokensTaken += this.worstCaseTokens;
    }
    let reservation: BudgetReservation | undefined;
    if (target.price) {
      const reserving = this.budget.reserveMicros(
        this.tenant,
        worstCaseMicros(target.price, this.inputTokens, this.outputTokens),
        this.holdMs,
      );
      if (reserving) reservation = isPromiseLike(reserving) ? await reserving : reserving;
    }
    return { target, reservation };
  }

  /** Charges an attempt that answered with `usage`. */
  succeeded(hold: AttemptHold, usage: ChatUsage): Promise<void> | undefined {
    this.tokensUsed += usage.prompt_tokens + usage.completion_tokens;
    return this.charge(hold, tokenUsage(usage));
  }

  /** What `usage` costs at `target`'s price, in micro-dollars, without charging it. */
  usageMicros(target: LlmTarget, usage: ChatUsage): number {
    return target.price ? costMicros(target.price, tokenUsage(usage)) : 0;
  }

  /** Charges an attempt that failed: its prompt if it was sent and not refused, else nothing. */
  failed(hold: AttemptHold, failure: ResilienceError): Promise<void> | undefined {
    const promptSent = failure.kind === 'timeout' || failure.kind === 'stopped';
    if (promptSent) this.tokensUsed += this.inputTokens;
    return this.charge(hold, { inputTokens: promptSent ? this.inputTokens : 0, outputTokens: 0 });
  }

  /** Frees the hold of an attempt that was never made: it cost nothing. */
  released(hold: AttemptHold): Promise<void> | undefined {
    return this.charge(hold, { inputTokens: 0, outputTokens: 0 });
  }

  /** Gives back the tokens taken ahead and not used; call once, when the request is over. */
  settleTokens(): Promise<void> | undefined {
    return this.limiter.settleTokens(this.tenant, this.tokensTaken, this.tokensUsed);
  }

  private charge(hold: AttemptHold, usage: TokenUsage): Promise<void> | undefined {
    const micros = hold.target.price ? costMicros(hold.target.price, usage) : 0;
    this.spentMicros += micros;
    return hold.reservation ? this.budget.settleMicros(hold.reservation, micros) : undefined;
  }
}

/** OpenAI's usage as the price table bills it: cache reads and writes apart from plain input. */
function tokenUsage(usage: ChatUsage): TokenUsage {
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  const written = usage.prompt_tokens_details?.cache_write_tokens ?? 0;
  return {
    inputTokens: Math.max(0, usage.prompt_tokens - cached - written),
    cachedInputTokens: cached,
    cacheWriteInputTokens: written,
    outputTokens: usage.completion_tokens,
  };
}
