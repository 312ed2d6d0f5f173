import type { ServerResponse } from 'node:http';
import fc from 'fast-check';
import type Redis from 'ioredis';
import { Agent, request } from 'undici';
import { FakeClock, settle } from '../../src/common/fake-clock';
import { REDIS } from '../../src/store';
import { capForWorstCases } from '../support/budget-race';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import { eventually } from '../support/eventually';
import { send } from '../support/http-client';
import { closeRedis, connectRedis, deleteKeysUnder, SHARED_REDIS_URL, uniquePrefix } from '../support/redis';
import { NO_REDIS_ENV } from '../support/redis-availability';
import { getLanes } from '../support/service-reads';
import { openaiChunks } from '../support/sse';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { Upstream, type UpstreamRequest } from '../support/upstream';

const ACME = testTenant('acme');
/** The cap holds three worst cases at once: concurrent requests must be refused past it. */
const CAP_USD = capForWorstCases(3);
/** The routes' deadline: streams run far past it, and holds and claims lasted it plus 5 s. */
const DEADLINE_MS = 1_000;
/** Virtual time per step: past one hold's unrenewed lifetime in a few steps. */
const STEP_MS = 2_000;
const STEPS = 6;
/** A client that has not answered by then, everything released, is a hang of the service. */
const CLIENT_TIMEOUT_MS = 15_000;

/**
 * One request of a run. `keyed` requests go to a route without hedges, carry `Idempotency-Key:
 * k<key>` and ask the key's own question, so the upstream's requests for that question are the
 * key's provider runs (keys 0 and 2 are streamed, key 1 not: the same key with another request
 * would be a conflict). The others go to a hedged route with one of a few questions (identical
 * ones join). A request starts at step `start` and its client leaves at step `leave`, if set.
 */
interface Planned {
  keyed: boolean;
  stream: boolean;
  key: number;
  question: number;
  start: number;
  leave: number | null;
}

const planned: fc.Arbitrary<Planned> = fc.record({
  keyed: fc.boolean(),
  stream: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  key: fc.nat({ max: 2 }),
  question: fc.nat({ max: 2 }),
  start: fc.nat({ max: 4 }),
  // Mostly clients that stay: a stream whose client leaves is cut, and costs what it sent.
  leave: fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.nat({ max: STEPS - 1 }) }),
});

/** A run: its requests, and how many of the upstream's held answers go on at each step. */
interface Scenario {
  requests: Planned[];
  releases: number[];
}

/** Each step: how many of the upstream's held answers go on (oldest first); mostly none, so streams run long. */
const scenario: fc.Arbitrary<Scenario> = fc.record({
  requests: fc.array(planned, { minLength: 3, maxLength: 9 }),
  releases: fc.array(fc.constantFrom(0, 0, 0, 1, 2), { minLength: STEPS, maxLength: STEPS }),
});

/**
 * The upstream of both targets: a streamed request gets its first content at once (past the
 * commit point, so it flows past its deadline) and the rest when released; a JSON request is
 * answered when released. Every answer bills 12 prompt tokens and the whole output cap, so
 * what it spends is near the worst case held for it: money spent on a hold that lapsed shows.
 */
class Provider {
  readonly questions: string[] = [];
  private readonly held: Array<() => void> = [];
  private open = false;

  readonly handler = async (upstream: UpstreamRequest, response: ServerResponse): Promise<void> => {
    const body = JSON.parse(upstream.body) as { stream?: boolean; messages: Array<{ content: string }> };
    this.questions.push(body.messages.at(-1)!.content);
    const chunks = openaiChunks(['Hel', 'lo ', 'there'], { usage: { prompt_tokens: 12, completion_tokens: 1000 } });
    if (!body.stream) {
      await this.hold();
      if (!response.destroyed) {
        response.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: 'chatcmpl-p',
            object: 'chat.completion',
            created: 1,
            model: 'gpt-test',
            choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 12, completion_tokens: 1000, total_tokens: 1012 },
          }),
        );
      }
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const write = (chunk: object) =>
      new Promise<void>((resolve) => response.write(`data: ${JSON.stringify(chunk)}\n\n`, () => resolve()));
    await write(chunks[0]);
    await write(chunks[1]);
    await this.hold();
    for (const chunk of chunks.slice(2)) {
      if (response.destroyed) return;
      await write(chunk);
    }
    response.end('data: [DONE]\n\n');
  };

  release(count: number): void {
    for (const go of this.held.splice(0, count)) go();
  }

  releaseForever(): void {
    this.open = true;
    this.release(this.held.length);
  }

  private hold(): Promise<void> {
    if (this.open) return Promise.resolve();
    return new Promise((resolve) => this.held.push(resolve));
  }
}

interface Sent {
  plan: Planned;
  controller: AbortController;
  status?: number;
  done: Promise<void>;
}

const stores = [
  { name: 'the memory store', redis: false, runs: 30 },
  { name: 'Redis', redis: true, runs: 30 },
].filter((store) => !store.redis || !process.env[NO_REDIS_ENV]);

// Whatever mix of long streams, clients that leave, hedges and keyed repeats arrives, in
// virtual time far past every deadline: the tenant never spends past its cap, nothing stays
// held, and a key never makes two provider runs.
describe.each(stores)('LLM money and keys over time, on $name', ({ redis, runs }) => {
  async function run({ requests, releases }: Scenario): Promise<void> {
    const provider = new Provider();
    const upstream = await Upstream.start(provider.handler);
    const clock = new FakeClock();
    const prefix = uniquePrefix('bh-llm-prop');
    const agent = new Agent();
    let app: TestApp | undefined;
    const sent: Sent[] = [];
    try {
      const target = (model: string) => ({ provider: 'openai', model, baseUrl: upstream.url('/v1') });
      const route = {
        lane: 'llm',
        deadlineMs: DEADLINE_MS,
        timeoutMs: DEADLINE_MS,
        firstByteTimeoutMs: DEADLINE_MS,
        idleTimeoutMs: 600_000,
        maxOutputTokens: 1000,
        retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
      };
      app = await createTestApp(
        {
          auth: { apiKeys: [ACME.apiKey], adminToken: ADMIN_TOKEN },
          ...(redis ? { store: { kind: 'redis', url: SHARED_REDIS_URL, prefix, commandTimeoutMs: 2_000 } } : {}),
          lanes: { llm: { concurrency: 16, queueCapacity: 16 } },
          budgets: { tenants: { acme: CAP_USD } },
          llm: {
            routes: {
              keyed: { ...route, cache: false, targets: [target('gpt-a')] },
              hedged: { ...route, hedgeAfterMs: 300, targets: [target('gpt-a'), target('gpt-b')] },
            },
            prices: {
              'openai/gpt-a': { inputPerMTokUsd: 1, outputPerMTokUsd: 1 },
              'openai/gpt-b': { inputPerMTokUsd: 1, outputPerMTokUsd: 1 },
            },
          },
        },
        { clock, redisOnClock: redis },
      );
      const base = app.url;
      const connection = redis ? app.app.get<Redis>(REDIS) : undefined;

      /** Moves virtual time on, letting the service answer (and a store reply) between small steps. */
      const pass = async (ms: number) => {
        for (let left = ms; left > 0; left -= 100) {
          await clock.advanceAsync(Math.min(100, left));
          if (connection) await connection.ping();
          for (let turn = 0; turn < 3; turn++) await settle();
        }
      };

      const start = (plan: Planned): Sent => {
        const controller = new AbortController();
        const timer = setTimeout(() => controller.abort(new Error('client timeout')), CLIENT_TIMEOUT_MS);
        const question = plan.keyed ? `key-${plan.key}` : `question-${plan.question}`;
        const headers: Record<string, string> = {
          authorization: `Bearer ${ACME.key}`,
          'content-type': 'application/json',
          ...(plan.keyed ? { 'idempotency-key': `k${plan.key}` } : {}),
        };
        const stream = plan.keyed ? plan.key !== 1 : plan.stream;
        const item: Sent = { plan, controller, done: Promise.resolve() };
        item.done = request(`${base}/v1/chat/completions`, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            model: plan.keyed ? 'keyed' : 'hedged',
            stream,
            messages: [{ role: 'user', content: question }],
          }),
          signal: controller.signal,
          dispatcher: agent,
        })
          .then(async (response) => {
            item.status = response.statusCode;
            await response.body.text();
          })
          .catch(() => undefined)
          .finally(() => clearTimeout(timer));
        return item;
      };

      for (let step = 0; step < STEPS; step++) {
        for (const plan of requests) if (plan.start === step) sent.push(start(plan));
        for (const item of sent) if (item.plan.leave === step) item.controller.abort();
        provider.release(releases[step]);
        await pass(STEP_MS);
      }
      provider.releaseForever();
      await pass(STEP_MS);
      await Promise.all(sent.map((item) => item.done));

      // Nobody hung: every client still there had its answer, and none was a failure of ours.
      for (const item of sent) {
        if (item.controller.signal.aborted) continue;
        expect(item.status).toBeDefined();
        expect([200, 402, 502, 503, 504]).toContain(item.status);
      }
      await eventually(async () => expect((await getLanes(base)).llm.active).toBe(0));
      // Every hold settled or released, and the tenant never spent past its cap.
      const budget = async () => (await send('GET', `${base}/v1/admin/budgets/acme`, { headers: AS_ADMIN })).body;
      await eventually(async () => expect((await budget()).reservedUsd).toBe(0));
      expect((await budget()).spentUsd).toBeLessThanOrEqual(CAP_USD);
      // A key made at most one provider run, however often it was sent, left or replayed.
      for (const key of [0, 1, 2]) {
        expect(provider.questions.filter((question) => question === `key-${key}`).length).toBeLessThanOrEqual(1);
      }
    } finally {
      for (const item of sent) item.controller.abort();
      provider.releaseForever();
      // The client's sockets first: an app closing with keep-alive sockets open waits on them.
      await agent.destroy();
      await closeOnFakeClock(app, clock);
      await upstream.close();
      if (redis) {
        const cleanup = await connectRedis();
        await deleteKeysUnder(cleanup, prefix);
        await closeRedis(cleanup);
      }
    }
  }

  it('never spends past the cap, leaves nothing held, and runs each key at most once', async () => {
    await fc.assert(fc.asyncProperty(scenario, run), { numRuns: runs, seed: 2212 });
  }, 180_000);
});
