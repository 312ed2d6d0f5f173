import { BudgetGate, type BudgetStore } from '../../src/budget';
import type { Clock } from '../../src/common';
import { RequestAccount } from '../../src/llm/routing/request-account';
import { type Price, PriceTable, type UsdRates } from '../../src/llm/pricing';
import type { MemoryRateLimitStore, RateLimiter } from '../../src/rate-limit';

// What the LLM routing specs account against: one request's tokens, two priced fake targets,
// tenant budgets and tokens-per-minute buckets.

/** The request's input estimate, in tokens. */
export const INPUT_TOKENS = 1_000;
/** The route's output cap, in tokens. */
export const OUTPUT_TOKENS = 500;
/** One attempt's worst case, in tokens: its input and the whole output cap. */
export const WORST_TOKENS = INPUT_TOKENS + OUTPUT_TOKENS;
/** 1 000 × $2 + 500 × $8 per million tokens. */
export const SMALL_WORST_MICROS = 6_000;
/** 1 000 × $10 + 500 × $30 per million tokens. */
export const LARGE_WORST_MICROS = 25_000;

/** fake/small at $2 in and $8 out per million tokens (with `small` over it), fake/large at $10 and $30. */
export function fakePrices(small: Partial<UsdRates> = {}): { SMALL: Price; LARGE: Price } {
  const prices = new PriceTable({
    'fake/small': { inputPerMTokUsd: 2, outputPerMTokUsd: 8, ...small },
    'fake/large': { inputPerMTokUsd: 10, outputPerMTokUsd: 30 },
  });
  return { SMALL: prices.priceOf('fake', 'small')!, LARGE: prices.priceOf('fake', 'large')! };
}

/** A daily budget gate on `store`: acme may spend $1, thrifty $0.01 (10 000 micro-dollars). */
export function dailyBudgetGate(store: BudgetStore, clock: Clock): BudgetGate {
  return new BudgetGate(store, { budgets: { period: 'day', tenants: { acme: 1, thrifty: 0.01 } } }, clock);
}

/** Whole tokens left in the tenant's tokens-per-minute bucket. */
export function tokensLeftIn(store: MemoryRateLimitStore, tenant: string, perMinute: number): number {
  return store.take(tenant, [{ name: 'tpm', perMinute }], [0]).buckets[0].remaining;
}

/**
 * A request's account as the route opens one once its admission ran: the first attempt's worst
 * case taken from the tenant's bucket (and handed to the account) when it has a tokens-per-minute
 * limit, each attempt's money held for two minutes unrenewed.
 */
export function admittedAccount(
  tenant: string,
  budget: BudgetGate,
  limiter: RateLimiter,
  clock: Clock,
): RequestAccount {
  expect(typeof limiter.admit(tenant, WORST_TOKENS)).toBe('boolean'); // decided at once
  return new RequestAccount({
    tenant,
    budget,
    limiter,
    clock,
    outputCap: OUTPUT_TOKENS,
    inputTokens: INPUT_TOKENS,
    outputTokens: OUTPUT_TOKENS,
    holdMs: 120_000,
    tokensTakenAtAdmission: limiter.limitsTokens(tenant) ? WORST_TOKENS : 0,
  });
}
