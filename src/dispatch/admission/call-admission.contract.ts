import { BudgetGate, type BudgetStore } from '../../budget';
import type { ResilienceError } from '../../common';
import { FakeClock } from '../../common/fake-clock';
import { RateLimiter, type RateLimitStore } from '../../rate-limit';
import { CallAdmission } from './call-admission';
import type { RedisCallAdmission } from './redis-call-admission';

/** The stores of one side of the suite, on the given clock; `joint` only on Redis. */
export interface AdmissionStores {
  rates: RateLimitStore;
  budgets: BudgetStore;
  joint: RedisCallAdmission | null;
}

export type MakeAdmissionStores = (clock: FakeClock) => AdmissionStores | Promise<AdmissionStores>;

/** 10:00 UTC: the day's budget period has 14 hours left. */
const WALL_START = Date.UTC(2026, 5, 1, 10);
const TIMES = { firstHoldMs: 40_000, retryHoldMs: 10_000, retryAfterMaxMs: 5_000 };
const RPM = 5;
/** Three calls of COST_USD fit. */
const CAP_USD = 3;
const COST_USD = 1;

/**
 * What steps 4 and 5 together promise, asserted through CallAdmission on real stores, so the
 * same suite runs on the memory stores (the steps one after the other) and on Redis (one
 * script): a call takes its request and holds its money, or takes and holds nothing.
 */
export function describeCallAdmission(name: string, makeStores: MakeAdmissionStores): void {
  describe(`CallAdmission contract: ${name}`, () => {
    let clock: FakeClock;
    let stores: AdmissionStores;
    let gate: BudgetGate;
    let admission: CallAdmission;

    beforeEach(async () => {
      clock = new FakeClock(WALL_START);
      stores = await makeStores(clock);
      gate = new BudgetGate(stores.budgets, { budgets: { period: 'day', tenants: { acme: CAP_USD } } }, clock);
      const limiter = new RateLimiter(stores.rates, {
        rateLimits: { default: { rpm: RPM }, tenants: {}, failMode: 'open', enforce: true },
      });
      admission = new CallAdmission(limiter, gate, stores.joint);
    });

    /** Admits a call of `costUsd` for `tenant`; answers its headers and its budget, or its refusal. */
    async function admit(costUsd = COST_USD, tenant = 'acme') {
      const headers = new Map<string, string>();
      const sink = { header: (header: string, value: string) => headers.set(header, value) };
      try {
        const budget = await admission.admit({ tenant, tokens: 1, costUsd, headers: sink }, TIMES);
        return { admitted: true as const, budget, headers };
      } catch (error) {
        return { admitted: false as const, error: error as ResilienceError, headers };
      }
    }

    /** How many cost-free calls the rate limit still admits. */
    async function requestsLeft(tenant = 'acme'): Promise<number> {
      for (let count = 0; count <= RPM; count++) {
        if (!(await admit(0, tenant)).admitted) return count;
      }
      return RPM + 1;
    }

    const reservedUsd = async () => (await gate.view('acme')).reservedUsd;

    it('takes one request and holds the first attempt’s cost', async () => {
      const first = await admit();

      expect(first.admitted).toBe(true);
      expect(first.headers.get('ratelimit')).toBe(`"rpm";r=${RPM - 1};t=12`);
      expect(await reservedUsd()).toBe(COST_USD);
      await expect(requestsLeft()).resolves.toBe(RPM - 1);
    });

    it('reserves nothing for a call the rate limit refuses', async () => {
      await expect(requestsLeft()).resolves.toBe(RPM);

      const refused = await admit();

      expect(refused.error).toMatchObject({ kind: 'rate_limited' });
      expect(refused.error?.retryAfterMs).toBeGreaterThan(0);
      expect(refused.headers.get('ratelimit')).toMatch(/^"rpm";r=0;/);
      expect(await reservedUsd()).toBe(0);
    });

    it('takes nothing from the rate limit for a call the budget refuses', async () => {
      for (let call = 0; call < CAP_USD; call++) expect((await admit()).admitted).toBe(true);

      const refused = await admit();

      expect(refused.error).toMatchObject({ kind: 'budget_exceeded', retryAfterMs: TIMES.retryAfterMaxMs });
      expect(await reservedUsd()).toBe(CAP_USD);
      await expect(requestsLeft()).resolves.toBe(RPM - CAP_USD);
    });

    it('admits exactly what both allow among concurrent calls, and takes for those alone', async () => {
      const answers = await Promise.all(Array.from({ length: 10 }, () => admit()));

      const kinds = answers.map((answer) => (answer.admitted ? 'ok' : answer.error.kind));
      expect(kinds.filter((kind) => kind === 'ok')).toHaveLength(CAP_USD);
      expect(
        kinds.filter((kind) => kind !== 'ok').every((kind) => kind === 'budget_exceeded' || kind === 'rate_limited'),
      ).toBe(true);
      expect(await reservedUsd()).toBe(CAP_USD);
      await expect(requestsLeft()).resolves.toBe(RPM - CAP_USD);
    });

    it('holds nothing for a call that costs nothing or a tenant without a cap, and still limits it', async () => {
      const free = await admit(0);
      const uncapped = await admit(COST_USD, 'globex');

      expect([free.admitted, free.budget, uncapped.admitted, uncapped.budget]).toEqual([
        true,
        undefined,
        true,
        undefined,
      ]);
      expect(await reservedUsd()).toBe(0);
      await expect(requestsLeft('globex')).resolves.toBe(RPM - 1);
    });

    it('holds the money of a tenant without rate limits', async () => {
      const noLimits = new RateLimiter(stores.rates, {
        rateLimits: { tenants: {}, failMode: 'open', enforce: true },
      });
      admission = new CallAdmission(noLimits, gate, stores.joint);

      const answer = await admit();

      expect(answer.admitted).toBe(true);
      expect(answer.headers.size).toBe(0);
      expect(await reservedUsd()).toBe(COST_USD);
    });

    it('settles what it holds: the money charged is spent, and frees the rest', async () => {
      const first = await admit();
      if (!first.admitted) throw first.error;

      await first.budget!.settle(true);

      await expect(gate.view('acme')).resolves.toMatchObject({ spentUsd: COST_USD, reservedUsd: 0 });
    });
  });
}
