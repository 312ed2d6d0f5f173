import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type Redis from 'ioredis';
import { seededRandom } from '../../src/common';
import { FakeClock } from '../../src/common/fake-clock';
import { REDIS } from '../../src/store';
import { argumentsFingerprint, IdempotencyStore, scopedIdempotencyKey } from '../../src/idempotency';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import { deferred } from '../support/deferred';
import { expectEnvelope } from '../support/envelope';
import { invoke, type Response } from '../support/http-client';
import { closeRedis, connectRedis, deleteKeysUnder, SHARED_REDIS_URL } from '../support/redis';
import { describeRedis } from '../support/redis-availability';
import { ReplyDroppingLink } from '../support/reply-dropping-link';
import { testTenant } from '../support/tenants';
import { Upstream } from '../support/upstream';

const ACME = testTenant('acme');
const KEY = 'order-K1';
const ARGS = { order: 'K1' };
/** The lane's queue wait, the tool's deadline and 5 s: the key's lease, 26 s. */
const LEASE_MS = 1_000 + 20_000 + 5_000;
/** How much virtual time the retry may take at most here: far less than a lease. */
const PROMPTLY_MS = 3_000;

/**
 * Issue 36, item 2: a claim that ran in Redis but whose reply never came back (the connection
 * broke in between) does not block its key for a whole lease. The call fails `unavailable`; the
 * claim is released with its own token once Redis answers again, so the client's retry of the
 * key runs at once, and while that retry runs, anyone else's claim of the key is still refused.
 */
describeRedis('a claim whose reply was lost (issue 36)', () => {
  let clock: FakeClock;
  let link: ReplyDroppingLink;
  let up: Upstream;
  let app: TestApp | undefined;
  let redis: Redis | undefined;
  const prefix = `bh-e2e:${randomUUID()}:`;
  const held = deferred<void>();

  beforeEach(async () => {
    clock = new FakeClock();
    link = await ReplyDroppingLink.open(Number(new URL(SHARED_REDIS_URL).port || 6379));
    // Answers the warm-up at once and holds the order until the test lets it go.
    up = await Upstream.start(async (request, response: ServerResponse) => {
      if (request.body.includes('K1')) await held.promise;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true }));
    });
    app = await createTestApp(
      {
        auth: { apiKeys: [ACME.apiKey] },
        store: { kind: 'redis', url: link.url, prefix, commandTimeoutMs: 2_000 },
        lanes: { main: { concurrency: 4, queueCapacity: 4, queueTtlMs: 1_000 } },
        tools: {
          paid: {
            lane: 'main',
            kind: 'http',
            url: up.url('/paid'),
            timeoutMs: 5_000,
            retry: { maxAttempts: 1, deadlineMs: 20_000 },
          },
        },
      },
      { clock, random: seededRandom(36), redisOnClock: true },
    );
  });

  afterEach(async () => {
    held.resolve();
    await up.close();
    await closeOnFakeClock(app, clock);
    await link.close();
    redis ??= await connectRedis();
    await deleteKeysUnder(redis, prefix);
    await closeRedis(redis);
  });

  const order = () => invoke(app!.url, 'paid', ARGS, { ...ACME.headers, 'idempotency-key': KEY });

  /**
   * The client's retry, sent again while the store is still reconnecting (answered 503 at once),
   * with virtual time moving in 100 ms steps until its run reaches the upstream or it is answered.
   */
  async function retryUntilItRuns(): Promise<{ retry: Promise<Response> }> {
    for (let tries = 0; tries < 200; tries++) {
      let answer: Response | undefined;
      const retry = order();
      void retry.then((response) => (answer = response));
      while (answer === undefined && up.requests.length < 2 && clock.now() < PROMPTLY_MS) {
        await clock.advanceAsync(100);
        // Every Redis round trip sent so far comes back before time moves on (a PING on the
        // service's own connection is answered after them), and the request gets to the service:
        // on a loaded machine, virtual time must not outrun the real I/O it waits for.
        await app!.app
          .get<Redis>(REDIS)
          .ping()
          .catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      if (up.requests.length >= 2 || clock.now() >= PROMPTLY_MS) return { retry };
      if (answer?.status !== 503) return { retry };
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error('the store never answered again');
  }

  it('fails the call unavailable, then runs the retry of its key at once, and refuses anyone else while it runs', async () => {
    // Loads the scripts: the lost reply must be the claim's own, not a NOSCRIPT.
    expect(
      (await invoke(app!.url, 'paid', { order: 'warm-up' }, { ...ACME.headers, 'idempotency-key': 'w' })).status,
    ).toBe(200);
    const scoped = scopedIdempotencyKey(ACME.tenant, 'paid', KEY);
    const lost = link.dropReplyTo(scoped);

    expectEnvelope(await order(), 503, 'unavailable');
    await lost;
    const { retry } = await retryUntilItRuns();

    expect(up.requests).toHaveLength(2);
    expect(clock.now()).toBeLessThan(PROMPTLY_MS);
    // The retry runs the key: another client's claim of it waits.
    const store = app!.app.get<IdempotencyStore>(IdempotencyStore);
    await expect(store.claim(scoped, argumentsFingerprint(ARGS), LEASE_MS, ACME.tenant)).resolves.toEqual({
      status: 'in_flight',
    });
    held.resolve();
    expect(await retry).toMatchObject({ status: 200, body: { replayed: false, attempts: 1 } });
    expect(await order()).toMatchObject({ status: 200, body: { replayed: true } });
    expect(up.requests).toHaveLength(2);
  });
});
