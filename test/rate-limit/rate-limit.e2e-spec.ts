import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import { FakeClock } from '../../src/common/fake-clock';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, PLATFORMS, type TestApp, type TestAppOptions } from '../support/create-app';
import { expectEnvelope } from '../support/envelope';
import { invoke, type Response, send } from '../support/http-client';
import { parsePromText, sampleValue } from '../support/prom-text';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { closeRedis, connectRedis, keysUnder, SHARED_REDIS_URL } from '../support/redis';
import { describeRedis } from '../support/redis-availability';

const REDIS_URL = SHARED_REDIS_URL;
/** A port nothing listens on: every connection to it is refused at once. */
const CLOSED_REDIS_URL = 'redis://127.0.0.1:1';
const SECOND = 1_000;

const ACME = testTenant('acme');
const BETA = testTenant('beta');

/** A lane wide enough that only the rate limit ever refuses a call. */
const LANES = { work: { concurrency: 256, queueCapacity: 0 } };
const READ = { lane: 'work', kind: 'builtin', builtin: 'echo' };

/** A config with the test tenants, the admin token, one echo tool `read`, and the given sections. */
function config(sections: Record<string, unknown>): Record<string, unknown> {
  const { tools, ...rest } = sections;
  return {
    auth: { allowAnonymous: true, adminToken: ADMIN_TOKEN, apiKeys: [ACME.apiKey, BETA.apiKey] },
    lanes: LANES,
    tools: { read: READ, ...(tools as Record<string, unknown> | undefined) },
    ...rest,
  };
}

/** The RateLimit headers of a response (undefined when absent). */
function limitHeaders(response: Response) {
  return { policy: response.headers['ratelimit-policy'], limit: response.headers.ratelimit };
}

/** Statuses of `responses`, counted: `{ 200: n, 429: m }`. */
function countStatuses(responses: Response[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const { status } of responses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

describe.each(PLATFORMS)('rate limits over HTTP, on %s', (platform) => {
  const running: Array<{ service: TestApp; clock: FakeClock }> = [];

  /** Starts an app on its own FakeClock; closed after the test. */
  const start = async (document: Record<string, unknown>, options: TestAppOptions = {}) => {
    const clock = (options.clock as FakeClock | undefined) ?? new FakeClock();
    const service = await createTestApp(document, { ...options, clock, platform });
    running.push({ service, clock });
    return { service, clock, url: service.url };
  };

  const scrape = async (url: string) => {
    const response = await send('GET', `${url}/metrics`);
    expect(response.status).toBe(200);
    return parsePromText(response.body as string);
  };

  afterEach(async () => {
    await Promise.all(running.splice(0).map(({ service, clock }) => closeOnFakeClock(service, clock)));
  });

  describe('on the memory store', () => {
    describe('a tenant with rpm 3', () => {
      let clock: FakeClock;
      let url: string;
      const call = () => invoke(url, 'read', { q: 1 }, ACME.headers);

      beforeEach(async () => {
        ({ clock, url } = await start(config({ rateLimits: { tenants: { acme: { rpm: 3 } } } })));
      });

      it('answers three calls with 200 and counts the RateLimit headers down to 0, then refuses the fourth with 429', async () => {
        for (const [index, remaining] of [2, 1, 0].entries()) {
          const response = await call();
          expect(response.status).toBe(200);
          expect(limitHeaders(response)).toEqual({
            policy: '"rpm";q=3;w=60',
            limit: `"rpm";r=${remaining};t=${20 * (index + 1)}`,
          });
          expect(response.headers['retry-after']).toBeUndefined();
        }

        const refused = await call();
        const error = expectEnvelope(refused, 429, 'rate_limited');
        expect(error).toMatchObject({ jsonrpcCode: -32005, attempts: 0, retryAfterMs: 20 * SECOND });
        // One token of an rpm-3 bucket comes back every 60 s / 3 = 20 s.
        expect(refused.headers['retry-after']).toBe('20');
        expect(limitHeaders(refused)).toEqual({ policy: '"rpm";q=3;w=60', limit: '"rpm";r=0;t=60' });
      });

      it('admits the next call once the clock has moved on by the Retry-After of the refusal', async () => {
        for (let index = 0; index < 3; index++) expect((await call()).status).toBe(200);
        const refused = await call();
        const { retryAfterMs } = expectEnvelope(refused, 429, 'rate_limited');

        clock.advance(retryAfterMs!);
        const admitted = await call();
        expect(admitted.status).toBe(200);
        expect(limitHeaders(admitted).limit).toBe('"rpm";r=0;t=60');
        expectEnvelope(await call(), 429, 'rate_limited');
      });

      it('refills continuously, one token per 20 s, rather than all at once at a minute boundary', async () => {
        for (let index = 0; index < 3; index++) expect((await call()).status).toBe(200);

        // 20 s in: a fixed minute window would still refuse; the bucket holds one token.
        clock.advance(20 * SECOND);
        expect((await call()).status).toBe(200);
        expect(expectEnvelope(await call(), 429, 'rate_limited').retryAfterMs).toBe(20 * SECOND);

        // 60 s in: a new minute window would admit three; the bucket has earned two since 20 s.
        clock.advance(40 * SECOND);
        expect((await call()).status).toBe(200);
        expect((await call()).status).toBe(200);
        expectEnvelope(await call(), 429, 'rate_limited');
      });

      it('takes nothing for a refused call: after many 429s, waiting for one token admits exactly one call', async () => {
        for (let index = 0; index < 3; index++) expect((await call()).status).toBe(200);
        for (let index = 0; index < 5; index++) {
          expect(expectEnvelope(await call(), 429, 'rate_limited').retryAfterMs).toBe(20 * SECOND);
        }

        clock.advance(10 * SECOND);
        for (let index = 0; index < 3; index++) {
          expect(expectEnvelope(await call(), 429, 'rate_limited').retryAfterMs).toBe(10 * SECOND);
        }

        clock.advance(10 * SECOND - 1);
        expect(expectEnvelope(await call(), 429, 'rate_limited').retryAfterMs).toBe(1);

        clock.advance(1);
        expect((await call()).status).toBe(200);
        expect(expectEnvelope(await call(), 429, 'rate_limited').retryAfterMs).toBe(20 * SECOND);
      });
    });

    describe('with a budget and a tool that costs money', () => {
      const budgetOf = async (url: string, tenant: string) => {
        const response = await send('GET', `${url}/v1/admin/budgets/${tenant}`, { headers: AS_ADMIN });
        expect(response.status).toBe(200);
        return response.body as { capUsd: number; spentUsd: number; reservedUsd: number };
      };

      it('reserves no budget for calls the rate limit refuses: reservedUsd stays 0 and spentUsd unchanged', async () => {
        const { url } = await start(
          config({
            tools: { paid: { ...READ, costUsd: 0.25 } },
            rateLimits: { tenants: { acme: { rpm: 2 } } },
            budgets: { tenants: { acme: 10 } },
          }),
        );
        for (let index = 0; index < 2; index++) {
          expect((await invoke(url, 'paid', {}, ACME.headers)).status).toBe(200);
        }
        expect(await budgetOf(url, 'acme')).toMatchObject({ capUsd: 10, spentUsd: 0.5, reservedUsd: 0 });

        const refused = await Promise.all(Array.from({ length: 5 }, () => invoke(url, 'paid', {}, ACME.headers)));
        for (const response of refused) expectEnvelope(response, 429, 'rate_limited');

        expect(await budgetOf(url, 'acme')).toMatchObject({ capUsd: 10, spentUsd: 0.5, reservedUsd: 0 });
        expect(sampleValue(await scrape(url), 'bulkhead_budget_spent_usd_total', { tenant: 'acme' })).toBe(0.5);
      });

      it('refuses with 429 rather than 402 when both the rate limit and the budget are spent (the limit comes first)', async () => {
        const { url } = await start(
          config({
            tools: { paid: { ...READ, costUsd: 0.25, retry: { maxAttempts: 1 } } },
            rateLimits: { tenants: { acme: { rpm: 2 } } },
            budgets: { tenants: { acme: 0.5 } },
          }),
        );
        for (let index = 0; index < 2; index++) {
          expect((await invoke(url, 'paid', {}, ACME.headers)).status).toBe(200);
        }
        expectEnvelope(await invoke(url, 'paid', {}, ACME.headers), 429, 'rate_limited');
        expect(await budgetOf(url, 'acme')).toMatchObject({ capUsd: 0.5, spentUsd: 0.5, reservedUsd: 0 });
      });
    });

    describe('per-tenant limits', () => {
      it('gives a tenant its own override, other tenants and anonymous the default, each in a bucket of its own', async () => {
        const { url } = await start(config({ rateLimits: { default: { rpm: 2 }, tenants: { acme: { rpm: 4 } } } }));

        for (let index = 0; index < 4; index++) {
          const response = await invoke(url, 'read', {}, ACME.headers);
          expect(response.status).toBe(200);
          expect(limitHeaders(response).policy).toBe('"rpm";q=4;w=60');
        }
        const acmeRefused = await invoke(url, 'read', {}, ACME.headers);
        expectEnvelope(acmeRefused, 429, 'rate_limited');
        expect(acmeRefused.headers['retry-after']).toBe('15');

        // acme's bucket is empty; beta's and anonymous's are untouched.
        for (const headers of [BETA.headers, {}]) {
          for (let index = 0; index < 2; index++) {
            const response = await invoke(url, 'read', {}, headers);
            expect(response.status).toBe(200);
            expect(limitHeaders(response)).toEqual({
              policy: '"rpm";q=2;w=60',
              limit: `"rpm";r=${1 - index};t=${30 * (index + 1)}`,
            });
          }
          const refused = await invoke(url, 'read', {}, headers);
          expectEnvelope(refused, 429, 'rate_limited');
          expect(refused.headers['retry-after']).toBe('30');
        }
      });

      it('limits anonymous callers by the default', async () => {
        const { url } = await start(config({ rateLimits: { default: { rpm: 1 } } }));
        const admitted = await invoke(url, 'read', {});
        expect(admitted.status).toBe(200);
        expect(limitHeaders(admitted)).toEqual({ policy: '"rpm";q=1;w=60', limit: '"rpm";r=0;t=60' });
        expectEnvelope(await invoke(url, 'read', {}), 429, 'rate_limited');
      });
    });

    describe('tokens per minute', () => {
      let url: string;

      beforeEach(async () => {
        ({ url } = await start(
          config({
            tools: { summarize: { ...READ, tokens: 400 }, bulk: { ...READ, tokens: 1001 } },
            rateLimits: { default: { tpm: 1000 } },
          }),
        ));
      });

      it('admits two calls of 400 tokens against tpm 1000, then refuses the third with 429', async () => {
        for (const remaining of [600, 200]) {
          const response = await invoke(url, 'summarize', {}, ACME.headers);
          expect(response.status).toBe(200);
          expect(limitHeaders(response).policy).toBe('"tpm";q=1000;w=60');
          expect(limitHeaders(response).limit).toMatch(new RegExp(`^"tpm";r=${remaining};t=\\d+$`));
        }
        const refused = await invoke(url, 'summarize', {}, ACME.headers);
        // 200 tokens are missing, earned at 1000 per minute in 12 s.
        expect(expectEnvelope(refused, 429, 'rate_limited').retryAfterMs).toBe(12 * SECOND);
        expect(refused.headers['retry-after']).toBe('12');
        expect(limitHeaders(refused)).toEqual({ policy: '"tpm";q=1000;w=60', limit: '"tpm";r=200;t=48' });
      });

      it('answers 400 schema, not 429, to a call that needs more tokens than a whole minute allows, and takes nothing', async () => {
        for (const headers of [ACME.headers, {}]) {
          const refused = await invoke(url, 'bulk', {}, headers);
          expectEnvelope(refused, 400, 'schema');
          expect(refused.headers['retry-after']).toBeUndefined();
        }
        // The bucket is still full: two calls of 400 fit.
        expect((await invoke(url, 'summarize', {}, ACME.headers)).status).toBe(200);
        expect((await invoke(url, 'summarize', {}, ACME.headers)).status).toBe(200);
        expectEnvelope(await invoke(url, 'summarize', {}, ACME.headers), 429, 'rate_limited');
      });
    });

    describe('shadow mode (enforce: false)', () => {
      it('never refuses and counts what would have been limited, anonymous as tenant other', async () => {
        const { url } = await start(config({ rateLimits: { default: { rpm: 1 }, enforce: false } }));
        const responses = [];
        for (let index = 0; index < 4; index++) responses.push(await invoke(url, 'read', {}, ACME.headers));
        for (let index = 0; index < 3; index++) responses.push(await invoke(url, 'read', {}));
        for (const response of responses) {
          expect(response.status).toBe(200);
          expect(response.headers['retry-after']).toBeUndefined();
        }

        const prom = await scrape(url);
        expect(sampleValue(prom, 'bulkhead_rate_limited_total', { tenant: 'acme' })).toBe(3);
        expect(sampleValue(prom, 'bulkhead_rate_limited_total', { tenant: 'other' })).toBe(2);
        expect(sampleValue(prom, 'bulkhead_rate_limited_total', { tenant: 'beta' })).toBeUndefined();
      });
    });

    describe('without limits', () => {
      it('sets no RateLimit headers when no rate limits are configured', async () => {
        const { url } = await start(config({}));
        for (const headers of [ACME.headers, {}]) {
          for (let index = 0; index < 5; index++) {
            const response = await invoke(url, 'read', {}, headers);
            expect(response.status).toBe(200);
            expect(limitHeaders(response)).toEqual({ policy: undefined, limit: undefined });
          }
        }
      });

      it('sets no RateLimit headers for a tenant without limits when only another tenant has them', async () => {
        const { url } = await start(config({ rateLimits: { tenants: { acme: { rpm: 1 } } } }));
        expect(limitHeaders(await invoke(url, 'read', {}, ACME.headers)).policy).toBe('"rpm";q=1;w=60');
        for (const headers of [BETA.headers, {}]) {
          for (let index = 0; index < 3; index++) {
            const response = await invoke(url, 'read', {}, headers);
            expect(response.status).toBe(200);
            expect(limitHeaders(response)).toEqual({ policy: undefined, limit: undefined });
          }
        }
      });
    });

    describe('under concurrency', () => {
      it('admits exactly 10 of 100 concurrent calls against rpm 10', async () => {
        const { url } = await start(config({ rateLimits: { default: { rpm: 10 } } }));
        const responses = await Promise.all(Array.from({ length: 100 }, () => invoke(url, 'read', {}, ACME.headers)));
        expect(countStatuses(responses)).toEqual({ 200: 10, 429: 90 });
        for (const response of responses.filter(({ status }) => status === 429)) {
          expectEnvelope(response, 429, 'rate_limited');
        }
      });
    });
  });

  describeRedis('on one Redis shared by two app instances', () => {
    let redis: Redis;
    let prefix: string;

    beforeAll(async () => {
      redis = await connectRedis();
    });

    beforeEach(() => {
      prefix = `bh-e2e:${randomUUID()}:`;
    });

    afterEach(async () => {
      const keys = await keysUnder(redis, prefix);
      if (keys.length > 0) await redis.del(...keys);
    });

    afterAll(async () => {
      await closeRedis(redis);
    });

    /** Two instances on one Redis and one prefix, each on a FakeClock of its own at the same time. */
    const startPair = async (rateLimits: Record<string, unknown>) => {
      const document = config({ store: { kind: 'redis', url: REDIS_URL, prefix }, rateLimits });
      const [a, b] = await Promise.all([
        start(document, { clock: new FakeClock(), redisOnClock: true }),
        start(document, { clock: new FakeClock(), redisOnClock: true }),
      ]);
      expect(a.clock.wallNow()).toBe(b.clock.wallNow());
      return { a, b };
    };

    it('admits exactly 10 of 100 concurrent calls spread over both instances against rpm 10', async () => {
      const { a, b } = await startPair({ default: { rpm: 10 } });
      const responses = await Promise.all(
        Array.from({ length: 100 }, (_, index) => invoke(index % 2 === 0 ? a.url : b.url, 'read', {}, ACME.headers)),
      );
      expect(countStatuses(responses)).toEqual({ 200: 10, 429: 90 });
      for (const response of responses.filter(({ status }) => status === 429)) {
        expectEnvelope(response, 429, 'rate_limited');
      }
      const buckets = (await keysUnder(redis, prefix)).filter((key) => key.endsWith(':rl'));
      expect(buckets).toEqual([`${prefix}{acme}:rl`]);
    });

    it('shares one bucket: a token earned is taken once, on whichever instance asks first', async () => {
      const { a, b } = await startPair({ tenants: { acme: { rpm: 10 } } });
      for (let index = 0; index < 10; index++) {
        expect((await invoke(index % 2 === 0 ? a.url : b.url, 'read', {}, ACME.headers)).status).toBe(200);
      }
      const refused = await invoke(b.url, 'read', {}, ACME.headers);
      expect(expectEnvelope(refused, 429, 'rate_limited').retryAfterMs).toBe(6 * SECOND);

      a.clock.advance(6 * SECOND);
      b.clock.advance(6 * SECOND);
      expect((await invoke(b.url, 'read', {}, ACME.headers)).status).toBe(200);
      expectEnvelope(await invoke(a.url, 'read', {}, ACME.headers), 429, 'rate_limited');
      // Anonymous has no limits here, on either instance.
      expect((await invoke(a.url, 'read', {})).status).toBe(200);
    });
  });

  describe('with Redis unreachable', () => {
    // Generous: an in-process start and a few calls on a loaded machine; a hang still fails.
    const BOOT_TIMEOUT_MS = 60_000;

    /** An app whose Redis is a closed port; start-up gives up waiting for it after 3 s. */
    const startWithoutRedis = (failMode: 'open' | 'closed') =>
      start(
        config({
          store: { kind: 'redis', url: CLOSED_REDIS_URL, prefix: `bh-e2e:${randomUUID()}:`, commandTimeoutMs: 200 },
          rateLimits: { default: { rpm: 1 }, failMode },
        }),
      );

    /**
     * A call that must be answered promptly, not held until Redis comes back (it never does here:
     * a held call would wait out the test). 10 s is far from either, even on a loaded machine.
     */
    const promptly = async (request: Promise<Response>) => {
      const startedAt = performance.now();
      const response = await request;
      expect(performance.now() - startedAt).toBeLessThan(10 * SECOND);
      return response;
    };

    it(
      'lets calls through with failMode open and counts them in bulkhead_rate_limit_failed_open_total',
      async () => {
        const { url } = await startWithoutRedis('open');
        const before = sampleValue(await scrape(url), 'bulkhead_rate_limit_failed_open_total') ?? 0;
        for (const headers of [ACME.headers, ACME.headers, {}, {}]) {
          const response = await promptly(invoke(url, 'read', {}, headers));
          expect(response.status).toBe(200);
        }
        expect(sampleValue(await scrape(url), 'bulkhead_rate_limit_failed_open_total')).toBe(before + 4);
        expect(sampleValue(await scrape(url), 'bulkhead_rate_limited_total', { tenant: 'acme' })).toBeUndefined();
      },
      BOOT_TIMEOUT_MS,
    );

    it(
      'refuses calls with 503 unavailable with failMode closed',
      async () => {
        const { url } = await startWithoutRedis('closed');
        for (const headers of [ACME.headers, {}]) {
          const response = await promptly(invoke(url, 'read', {}, headers));
          expectEnvelope(response, 503, 'unavailable');
        }
        expect(sampleValue(await scrape(url), 'bulkhead_rate_limit_failed_open_total')).toBe(0);
      },
      BOOT_TIMEOUT_MS,
    );

    it.each(['open', 'closed'] as const)(
      'answers /health/ready 503 and /health/live 200 (failMode %s)',
      async (failMode) => {
        const { url } = await startWithoutRedis(failMode);
        const ready = await promptly(send('GET', `${url}/health/ready`));
        expect(expectEnvelope(ready, 503, 'unavailable').message).toMatch(/redis/);
        const live = await promptly(send('GET', `${url}/health/live`));
        expect(live.status).toBe(200);
        expect(live.body).toMatchObject({ status: 'ok' });
      },
      BOOT_TIMEOUT_MS,
    );
  });
});
