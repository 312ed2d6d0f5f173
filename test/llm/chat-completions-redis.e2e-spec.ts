import OpenAI from 'openai';
import { capForWorstCases, sendAtOnce } from '../support/budget-race';
import { createTestApp, type TestApp } from '../support/create-app';
import type { Deferred } from '../support/deferred';
import { eventually } from '../support/eventually';
import { send } from '../support/http-client';
import { openaiAnswer } from '../support/llm-answers';
import { closeRedis, connectRedis, deleteKeysUnder, SHARED_REDIS_URL, uniquePrefix } from '../support/redis';
import { describeRedis } from '../support/redis-availability';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { heldIn, json, Upstream } from '../support/upstream';

const ACME = testTenant('acme');
// 40 prompt tokens: within each question's estimate, so charged as reported.
const ANSWER = json(200, openaiAnswer('ok', { prompt_tokens: 40, completion_tokens: 100 }, 'gpt-primary'));

describeRedis('the LLM route on two replicas sharing Redis', () => {
  let upstream: Upstream;
  let replicas: TestApp[] = [];
  let prefix: string;
  const gates: Array<Deferred<void>> = [];

  beforeEach(async () => {
    prefix = uniquePrefix('bh-llm');
    gates.length = 0;
    // Holds its answers until the test releases them.
    upstream = await Upstream.start(heldIn(gates, ANSWER));
  });

  afterEach(async () => {
    for (const gate of gates) gate.resolve();
    await Promise.all(replicas.map((replica) => replica.close()));
    replicas = [];
    await upstream.close();
    const redis = await connectRedis();
    await deleteKeysUnder(redis, prefix);
    await closeRedis(redis);
  });

  it('never lets 10 concurrent requests across both spend past the budget they share', async () => {
    // One request's worst case at $1 per million tokens each way; the cap holds three at once.
    const capUsd = capForWorstCases(3.5);
    const document = {
      auth: { apiKeys: [ACME.apiKey], adminToken: ADMIN_TOKEN },
      store: { kind: 'redis', url: SHARED_REDIS_URL, prefix, commandTimeoutMs: 2_000 },
      lanes: { llm: { concurrency: 16, queueCapacity: 16 } },
      budgets: { tenants: { acme: capUsd } },
      llm: {
        routes: {
          chat: {
            lane: 'llm',
            maxOutputTokens: 1000,
            targets: [{ provider: 'openai', model: 'gpt-primary', baseUrl: upstream.url('/v1') }],
          },
        },
        prices: { 'openai/gpt-primary': { inputPerMTokUsd: 1, outputPerMTokUsd: 1 } },
      },
    };
    replicas = [await createTestApp(document), await createTestApp(document)];

    // Different questions, alternating replicas: identical ones would be joined into one call.
    const { answers, refused } = sendAtOnce(10, (index) => {
      const client = new OpenAI({ apiKey: ACME.key, baseURL: `${replicas[index % 2].url}/v1`, maxRetries: 0 });
      return client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: `x${index}` }] });
    });
    await eventually(() => expect([gates.length, refused.length]).toEqual([3, 7]));
    for (const gate of gates) gate.resolve();
    const statuses = await Promise.all(answers);

    expect(statuses.filter((status) => status === 200)).toHaveLength(3);
    expect(statuses.filter((status) => status === 402)).toHaveLength(7);
    const view = await send('GET', `${replicas[1].url}/v1/admin/budgets/acme`, { headers: AS_ADMIN });
    expect(view.body).toMatchObject({ spentUsd: 0.00042, reservedUsd: 0 });
  });

  it('answers on one replica from the cache the other filled', async () => {
    upstream.use(ANSWER);
    const document = {
      auth: { apiKeys: [ACME.apiKey] },
      store: { kind: 'redis', url: SHARED_REDIS_URL, prefix, commandTimeoutMs: 2_000 },
      lanes: { llm: { concurrency: 4, queueCapacity: 4 } },
      llm: {
        routes: {
          chat: { lane: 'llm', targets: [{ provider: 'openai', model: 'gpt-primary', baseUrl: upstream.url('/v1') }] },
        },
      },
    };
    replicas = [await createTestApp(document), await createTestApp(document)];
    const ask = (replica: TestApp) =>
      new OpenAI({ apiKey: ACME.key, baseURL: `${replica.url}/v1`, maxRetries: 0 }).chat.completions
        .create({ model: 'chat', messages: [{ role: 'user', content: 'shared question' }] })
        .withResponse();

    await ask(replicas[0]);
    const second = await ask(replicas[1]);

    expect(second.response.headers.get('x-bulkhead-cache')).toBe('hit');
    expect(upstream.requests).toHaveLength(1);
  });
});
