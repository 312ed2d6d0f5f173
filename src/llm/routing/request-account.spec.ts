import { type BudgetGate, MemoryBudgetStore, microsToUsd } from '../../budget';
import { ResilienceError } from '../../common';
import { FakeClock } from '../../common/fake-clock';
import { MemoryRateLimitStore, RateLimiter } from '../../rate-limit';
import {
  dailyBudgetGate,
  fakePrices,
  INPUT_TOKENS,
  LARGE_WORST_MICROS,
  OUTPUT_TOKENS,
  SMALL_WORST_MICROS,
  tokensLeftIn,
  WORST_TOKENS,
} from '../../../test/support/llm-accounting';
import type { ChatUsage } from '../chat.types';
import type { Price } from '../pricing';
import { ProviderFailure } from '../providers/provider-errors';
import type { LlmTarget } from './llm-route';
import type { UsageRejection } from './billed-usage';
import { RequestAccount, type RequestAccountSettings } from './request-account';

const TPM = 10_000;

const { SMALL, LARGE } = fakePrices({ cachedInputPerMTokUsd: 0.5 });

let clock: FakeClock;
let budgetStore: MemoryBudgetStore;
let gate: BudgetGate;
let rateStore: MemoryRateLimitStore;
let limiter: RateLimiter;

beforeEach(() => {
  clock = new FakeClock();
  budgetStore = new MemoryBudgetStore(clock);
  // thrifty's cap is $0.01: 10 000 micro-dollars, below one large worst case.
  gate = dailyBudgetGate(budgetStore, clock);
  rateStore = new MemoryRateLimitStore(clock);
  limiter = new RateLimiter(rateStore, {
    rateLimits: {
      // tight's bucket holds the admission's worst case and not a second one.
      tenants: { acme: { tpm: TPM }, thrifty: { tpm: TPM }, tight: { tpm: 2_000 }, counted: { rpm: 100 } },
      failMode: 'closed',
      enforce: true,
    },
  });
});

// RequestAccount reads a target's price and nothing else of it.
function target(price: Price | undefined): LlmTarget {
  return { label: 'fake/test', price } as LlmTarget;
}

/** An account as the route opens one: after the admission took the first attempt's worst case. */
function admitted(tenant = 'acme', onUsageRejected?: RequestAccountSettings['onUsageRejected']): RequestAccount {
  const admitting = limiter.admit(tenant, WORST_TOKENS);
  expect(typeof admitting).toBe('boolean'); // decided at once
  const taken = limiter.limitsTokens(tenant) ? WORST_TOKENS : 0;
  return new RequestAccount({
    tenant,
    budget: gate,
    limiter,
    clock,
    outputCap: OUTPUT_TOKENS,
    inputTokens: INPUT_TOKENS,
    outputTokens: OUTPUT_TOKENS,
    holdMs: 60_000,
    tokensTakenAtAdmission: taken,
    onUsageRejected,
  });
}

function usage(prompt: number, completion: number, cached = 0): ChatUsage {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cached },
  };
}

async function expectBudget(tenant: string, spentMicros: number, reservedMicros: number): Promise<void> {
  const view = await gate.view(tenant);
  expect({ spentUsd: view.spentUsd, reservedUsd: view.reservedUsd }).toEqual({
    spentUsd: microsToUsd(spentMicros),
    reservedUsd: microsToUsd(reservedMicros),
  });
}

/** Whole tokens left in the tenant's tokens-per-minute bucket (virtual time stands still here). */
function tokensLeft(tenant: string, perMinute = TPM): number {
  return tokensLeftIn(rateStore, tenant, perMinute);
}

describe('RequestAccount', () => {
  it('holds the worst case of an attempt at its target price, taking no tokens beyond the admission', async () => {
    const account = admitted();

    const hold = await account.hold(target(SMALL));

    expect(hold.reservation?.amountMicros).toBe(SMALL_WORST_MICROS);
    await expectBudget('acme', 0, SMALL_WORST_MICROS);
    expect(tokensLeft('acme')).toBe(TPM - WORST_TOKENS);
    expect(account.worstCaseTokens).toBe(WORST_TOKENS);
  });

  it('charges the real usage of an attempt that answered and frees the rest', async () => {
    const account = admitted();
    const hold = await account.hold(target(SMALL));

    await account.charge(hold, usage(800, 100));

    // 800 × $2 + 100 × $8 per million tokens.
    await expectBudget('acme', 2_400, 0);
    expect(account.costMicros).toBe(2_400);
    expect(gate.spentMicros.get('acme')).toBe(2_400);
  });

  it('bills prompt tokens read from the provider cache at the cached rate', async () => {
    const account = admitted();
    const hold = await account.hold(target(SMALL));

    await account.charge(hold, usage(800, 100, 600));

    // 200 × $2 + 600 × $0.50 + 100 × $8 per million tokens.
    await expectBudget('acme', 1_500, 0);
  });

  it('charges usage a provider reported wrong at most its hold, and says which counts and why', async () => {
    const rejected: Array<[string, UsageRejection]> = [];
    const account = admitted('acme', (to, rejection) => rejected.push([to.label, rejection]));
    const hold = await account.hold(target(SMALL));

    await account.charge(hold, usage(-5, 1e308));

    // Read as the most the hold allowed: the whole estimate and the whole cap, no more.
    await expectBudget('acme', SMALL_WORST_MICROS, 0);
    expect(account.costMicros).toBe(SMALL_WORST_MICROS);
    expect(rejected).toEqual([
      ['fake/test', { field: 'prompt_tokens', reason: 'negative' }],
      ['fake/test', { field: 'completion_tokens', reason: 'above_bound' }],
    ]);
    account.settleTokens();
    expect(tokensLeft('acme')).toBe(TPM - WORST_TOKENS);
  });

  it.each([
    ['infinite', Infinity],
    ['NaN', Number.NaN],
    ['past 2^53', 2 ** 53],
    ['fractional', 0.5],
    ['negative', -1],
  ])(
    'settles its hold, within it, when the cached count is %s (it once threw and left the hold unsettled)',
    async (_what, cached) => {
      const account = admitted();
      const hold = await account.hold(target(SMALL));

      await account.charge(hold, usage(800, 100, cached));

      const { spentUsd, reservedUsd } = await gate.view('acme');
      expect(reservedUsd).toBe(0);
      expect(Number.isFinite(spentUsd) && spentUsd > 0 && spentUsd <= microsToUsd(SMALL_WORST_MICROS)).toBe(true);
    },
  );

  it('keeps a tenant under its cap whatever its provider reports', async () => {
    const account = admitted('thrifty');
    const hold = await account.hold(target(SMALL));

    await account.charge(hold, usage(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, 0));

    await expectBudget('thrifty', SMALL_WORST_MICROS, 0);
    expect((await gate.view('thrifty')).spentUsd).toBeLessThanOrEqual(0.01);
  });

  it('shows the usage it charged, and prices it without charging', () => {
    const account = admitted();
    const sane = usage(800, 100);

    expect(account.billedUsage(sane)).toBe(sane);
    expect(account.billedUsage(usage(-5, 1e308))).toMatchObject({
      prompt_tokens: INPUT_TOKENS,
      completion_tokens: OUTPUT_TOKENS,
      total_tokens: WORST_TOKENS,
    });
    expect(account.usageMicros(target(SMALL), usage(-5, 1e308))).toBe(SMALL_WORST_MICROS);
  });

  it.each([
    ['transient', new ProviderFailure('transient', 'overloaded', 'target answered 503')],
    ['invalid_request', new ProviderFailure('invalid_request', 'bad_request', 'target answered 400')],
    ['unavailable', new ProviderFailure('unavailable', 'insufficient_quota', 'target answered 429')],
    ['circuit_open', new ResilienceError('circuit_open', 'circuit is open')],
    ['internal', new ResilienceError('internal', 'internal error')],
  ])('charges nothing for an attempt that failed %s, and frees its hold', async (_kind, failure) => {
    const account = admitted();
    const hold = await account.hold(target(SMALL));

    await account.failed(hold, failure, true);

    await expectBudget('acme', 0, 0);
    expect(account.costMicros).toBe(0);
    account.settleTokens();
    expect(tokensLeft('acme')).toBe(TPM);
  });

  it.each(['timeout', 'stopped'] as const)(
    'charges an attempt that ended %s its input estimate: the prompt was sent',
    async (kind) => {
      const account = admitted();
      const hold = await account.hold(target(SMALL));

      await account.failed(hold, new ResilienceError(kind, 'no answer'), true);

      // 1 000 × $2 per million tokens.
      await expectBudget('acme', 2_000, 0);
      expect(account.costMicros).toBe(2_000);
      account.settleTokens();
      expect(tokensLeft('acme')).toBe(TPM - INPUT_TOKENS);
    },
  );

  it('frees the hold of an attempt that was never made, charging nothing and giving its tokens back', async () => {
    const account = admitted();
    await account.failed(await account.hold(target(SMALL)), new ResilienceError('transient', 'failed'), true);
    const hold = await account.hold(target(LARGE));

    await account.released(hold);

    await expectBudget('acme', 0, 0);
    expect(account.costMicros).toBe(0);
    account.settleTokens();
    expect(tokensLeft('acme')).toBe(TPM);
  });

  it('holds a later attempt at its own target price', async () => {
    const account = admitted();
    await account.failed(await account.hold(target(SMALL)), new ResilienceError('transient', 'failed'), true);

    const hold = await account.hold(target(LARGE));

    expect(hold.reservation?.amountMicros).toBe(LARGE_WORST_MICROS);
    await expectBudget('acme', 0, LARGE_WORST_MICROS);
  });

  it('takes the worst-case tokens of every attempt after the first, and gives back exactly taken − used', async () => {
    const account = admitted();
    const settle = jest.spyOn(limiter, 'settleTokens');
    await account.failed(await account.hold(target(SMALL)), new ResilienceError('timeout', 'no answer'), true);
    await account.failed(await account.hold(target(SMALL)), new ResilienceError('transient', 'failed'), true);
    const hold = await account.hold(target(LARGE));
    expect(tokensLeft('acme')).toBe(TPM - 3 * WORST_TOKENS);

    await account.charge(hold, usage(800, 100));
    account.settleTokens();

    // Used: the timed-out prompt (1 000) and the answer (900); taken: three worst cases.
    expect(settle).toHaveBeenCalledWith('acme', 3 * WORST_TOKENS, 1_900);
    expect(tokensLeft('acme')).toBe(TPM - 1_900);
  });

  it('refuses an attempt over the budget with budget_exceeded, holding nothing', async () => {
    const account = admitted('thrifty');
    await account.failed(await account.hold(target(SMALL)), new ResilienceError('transient', 'failed'), true);

    await expect(account.hold(target(LARGE))).rejects.toMatchObject({ kind: 'budget_exceeded' });

    await expectBudget('thrifty', 0, 0);
    // The refused attempt's tokens were taken before the budget refused it: they all go back.
    account.settleTokens();
    expect(tokensLeft('thrifty')).toBe(TPM);
  });

  it('refuses a later attempt with rate_limited when the bucket is short, taking and reserving nothing', async () => {
    const account = admitted('tight');
    await account.failed(await account.hold(target(SMALL)), new ResilienceError('transient', 'failed'), true);
    const reserve = jest.spyOn(gate, 'reserveMicros');

    await expect(account.hold(target(SMALL))).rejects.toMatchObject({ kind: 'rate_limited' });

    expect(reserve).not.toHaveBeenCalled();
    expect(tokensLeft('tight', 2_000)).toBe(2_000 - WORST_TOKENS);
    account.settleTokens();
    expect(tokensLeft('tight', 2_000)).toBe(2_000);
  });

  it('reserves nothing and costs nothing for an unpriced target', async () => {
    const account = admitted();
    const reserve = jest.spyOn(gate, 'reserveMicros');

    const hold = await account.hold(target(undefined));
    await account.charge(hold, usage(800, 100));

    expect(hold.reservation).toBeUndefined();
    expect(reserve).not.toHaveBeenCalled();
    expect(account.costMicros).toBe(0);
    await expectBudget('acme', 0, 0);
    // Its tokens still count against the tokens-per-minute limit.
    account.settleTokens();
    expect(tokensLeft('acme')).toBe(TPM - 900);
  });

  it('reserves nothing for a tenant without a cap, and still counts what the request cost', async () => {
    const account = admitted('tight');

    const hold = await account.hold(target(SMALL));
    await account.charge(hold, usage(800, 100));

    expect(hold.reservation).toBeUndefined();
    expect(account.costMicros).toBe(2_400);
    await expectBudget('tight', 0, 0);
  });

  it('takes and gives back no tokens for a tenant without a tokens-per-minute limit', async () => {
    const account = admitted('counted');
    const take = jest.spyOn(rateStore, 'take');
    const adjust = jest.spyOn(rateStore, 'adjust');

    await account.failed(await account.hold(target(SMALL)), new ResilienceError('transient', 'failed'), true);
    await account.charge(await account.hold(target(SMALL)), usage(800, 100));

    expect(account.settleTokens()).toBeUndefined();
    expect(take).not.toHaveBeenCalled();
    expect(adjust).not.toHaveBeenCalled();
  });
});
