import type Redis from 'ioredis';
import { FakeClock, settle } from '../../src/common/fake-clock';
import { REDIS } from '../../src/store';
import { capForWorstCases } from '../support/budget-race';
import { createTestApp, type TestApp } from '../support/create-app';
import { deferred, type Deferred } from '../support/deferred';
import { eventually } from '../support/eventually';
import { send } from '../support/http-client';
import { closeRedis, connectRedis, deleteKeysUnder, SHARED_REDIS_URL, uniquePrefix } from '../support/redis';
import { NO_REDIS_ENV } from '../support/redis-availability';
import { openaiChunks, type SseAnswer, streamChat, streamedText, streamed } from '../support/sse';
import { getLanes } from '../support/service-reads';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { Upstream } from '../support/upstream';

const ACME = testTenant('acme');
const AS_ACME = { authorization: `Bearer ${ACME.key}` };
/** 12 prompt and 3 completion tokens at $1 per million each way. */
const STREAM_COST_USD = 15 / 1e6;
/** The route's deadline: every hold and lease used to last it and 5 s more, however long a stream ran. */
const DEADLINE_MS = 1_000;
const ask = (text: string) => ({
  model: 'chat',
  max_tokens: 1000,
  messages: [{ role: 'user' as const, content: text }],
});

// Streams that outlive their route's deadline (which never cuts a stream that flows) keep their
// money held until they settle and their Idempotency-Key claimed until they end, on either store.
const stores = [
  { name: 'the memory store', redis: false },
  { name: 'Redis', redis: true },
].filter((store) => !store.redis || !process.env[NO_REDIS_ENV]);

describe.each(stores)('streams that outlive their deadline, on $name', ({ redis }) => {
  let upstream: Upstream;
  let app: TestApp;
  let clock: FakeClock;
  let prefix: string;
  /** Each request's gate before its second content chunk: the stream flows until the test opens it. */
  let gates: Array<Deferred<void>>;

  beforeEach(async () => {
    clock = new FakeClock();
    prefix = uniquePrefix('bh-long');
    gates = [];
    upstream = await Upstream.start((request, response) => {
      const gate = deferred<void>();
      gates.push(gate);
      return streamed(openaiChunks(['Hel', 'lo ', 'there']), { gates: new Map([[2, gate]]) })(request, response);
    });
    app = await createTestApp(
      {
        auth: { apiKeys: [ACME.apiKey], adminToken: ADMIN_TOKEN },
        ...(redis ? { store: { kind: 'redis', url: SHARED_REDIS_URL, prefix, commandTimeoutMs: 2_000 } } : {}),
        lanes: { llm: { concurrency: 8, queueCapacity: 8 } },
        // Two streams' worst cases fit, a third does not.
        budgets: { tenants: { acme: capForWorstCases(2.5) } },
        llm: {
          routes: {
            chat: {
              lane: 'llm',
              deadlineMs: DEADLINE_MS,
              timeoutMs: DEADLINE_MS,
              firstByteTimeoutMs: DEADLINE_MS,
              idleTimeoutMs: 600_000,
              cache: false,
              retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
              targets: [{ provider: 'openai', model: 'gpt-primary', baseUrl: upstream.url('/v1') }],
            },
          },
          prices: { 'openai/gpt-primary': { inputPerMTokUsd: 1, outputPerMTokUsd: 1 } },
        },
      },
      { clock, redisOnClock: redis },
    );
  });

  afterEach(async () => {
    for (const gate of gates) gate.resolve();
    await app?.close();
    await upstream.close();
    if (redis) {
      const connection = await connectRedis();
      await deleteKeysUnder(connection, prefix);
      await closeRedis(connection);
    }
  });

  /**
   * Moves virtual time on in small steps, letting the store answer what each step asked of it:
   * on Redis, a PING on the service's own connection is answered after every command sent before
   * it (a renewal included), so virtual time never runs on while a renewal is still on its way.
   */
  async function pass(ms: number): Promise<void> {
    for (let left = ms; left > 0; left -= 100) {
      await clock.advanceAsync(Math.min(100, left));
      if (redis) await app.app.get<Redis>(REDIS).ping();
      for (let turn = 0; turn < 3; turn++) await settle();
    }
  }

  async function budget(): Promise<{ spentUsd: number; reservedUsd: number }> {
    return (await send('GET', `${app.url}/v1/admin/budgets/acme`, { headers: AS_ADMIN })).body;
  }

  /** A stream started and past its commit point: its first content went out, its second waits for its gate. */
  async function flowing(
    text: string,
    headers: Record<string, string> = {},
  ): Promise<{ answering: Promise<SseAnswer> }> {
    const before = upstream.requests.length;
    const answer = streamChat(app.url, ask(text), { ...AS_ACME, ...headers });
    await eventually(() => expect(upstream.requests).toHaveLength(before + 1));
    await eventually(async () => expect((await budget()).reservedUsd).toBeGreaterThan(0));
    return { answering: answer };
  }

  it('charges a stream that ran past its hold what it used, and holds its money until then', async () => {
    const { answering } = await flowing('long');
    const held = (await budget()).reservedUsd;

    // 8.8 s: far past the deadline and the 5 s margin its hold used to end with.
    await pass(8_800);
    expect(await budget()).toEqual(expect.objectContaining({ spentUsd: 0, reservedUsd: held }));
    gates[0].resolve();
    const answer = await answering;

    expect(streamedText(answer.chunks)).toBe('Hello there');
    expect(answer.done).toBe(true);
    await eventually(async () => expect(await budget()).toEqual(expect.objectContaining({ reservedUsd: 0 })));
    expect((await budget()).spentUsd).toBeCloseTo(STREAM_COST_USD, 9);
  });

  it('never lets a stream start on money that long streams still hold', async () => {
    const first = (await flowing('one')).answering;
    const second = (await flowing('two')).answering;

    await pass(8_800);
    const third = await streamChat(app.url, ask('three'), AS_ACME);

    expect(third.status).toBe(402);
    expect(upstream.requests).toHaveLength(2);
    for (const gate of gates) gate.resolve();
    await Promise.all([first, second]);
    await eventually(async () => expect((await budget()).reservedUsd).toBe(0));
    expect((await budget()).spentUsd).toBeCloseTo(2 * STREAM_COST_USD, 9);
  });

  it('keeps the Idempotency-Key of a stream claimed while it runs: a repeat joins it, one provider run', async () => {
    const key = { 'idempotency-key': 'long-stream-1' };
    const first = (await flowing('keyed', key)).answering;

    await pass(7_000);
    const repeating = streamChat(app.url, ask('keyed'), { ...AS_ACME, ...key });
    await pass(500);
    expect(upstream.requests).toHaveLength(1);
    gates[0].resolve();

    const [original, repeat] = await Promise.all([first, repeating]);
    expect(streamedText(original.chunks)).toBe('Hello there');
    expect(streamedText(repeat.chunks)).toBe('Hello there');
    expect(repeat.headers['x-bulkhead-cache']).toBeDefined();
    expect(upstream.requests).toHaveLength(1);
  });

  // Only a shared store can lose a hold under a live process (a flush, a failover to a replica behind).
  if (redis)
    it('ends a stream whose hold the store lost with an error event, and frees its slot: nothing is spent on money not held', async () => {
      const { answering } = await flowing('lost');
      const connection = await connectRedis();
      await deleteKeysUnder(connection, prefix);
      await closeRedis(connection);

      await pass(2_000);
      const answer = await answering;

      expect(answer.done).toBe(false);
      expect(streamedText(answer.chunks)).toBe('Hel');
      expect(answer.chunks.at(-1)).toMatchObject({ error: { kind: 'unavailable' } });
      await eventually(() => expect(upstream.abandoned).toBe(1));
      await eventually(async () => expect((await getLanes(app.url)).llm.active).toBe(0));
    });
});
