import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import { estimateInputTokens } from '../../src/llm/pricing';
import { createTestApp, type TestApp } from '../support/create-app';
import { type Deferred, deferred } from '../support/deferred';
import { eventually } from '../support/eventually';
import { send } from '../support/http-client';
import { closeRedis, connectRedis, deleteKeysUnder, SHARED_REDIS_URL, uniquePrefix } from '../support/redis';
import { describeRedis } from '../support/redis-availability';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { Upstream } from '../support/upstream';

const ACME = testTenant('acme');

describeRedis('the LLM route on two replicas sharing Redis', () => {
  let upstream: Upstream;
  let replicas: TestApp[] = [];
  let prefix: string;
  const gates: Array<Deferred<void>> = [];
  /** Whether the upstream holds its answers until the test releases them. */
  let hold = true;

  beforeEach(async () => {
    prefix = uniquePrefix('bh-llm');
    gates.length = 0;
    hold = true;
    upstream = await Upstream.start(async (_request, response: ServerResponse) => {
      if (hold) {
        const gate = deferred<void>();
        gates.push(gate);
        await gate.promise;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1_700_000_000,
          model: 'gpt-primary',
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop', logprobs: null }],
          usage: { prompt_tokens: 100, completion_tokens: 100, total_tokens: 200 },
        }),
      );
    });
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
    const worstUsd =
      (estimateInputTokens({ model: 'chat', messages: [{ role: 'user', content: 'x0' }], max_tokens: 1000 }) + 1000) /
      1e6;
    const capUsd = Math.round(worstUsd * 3.5 * 1e6) / 1e6;
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
    const refused: number[] = [];

    // Different questions, alternating replicas: identical ones would be joined into one call.
    const answers = Array.from({ length: 10 }, (_, index) =>
      new OpenAI({ apiKey: ACME.key, baseURL: `${replicas[index % 2].url}/v1`, maxRetries: 0 }).chat.completions
        .create({ model: 'chat', messages: [{ role: 'user', content: `x${index}` }] })
        .then(
          () => 200,
          (error: { status?: number }) => {
            refused.push(index);
            return error.status;
          },
        ),
    );
    await eventually(() => expect([gates.length, refused.length]).toEqual([3, 7]));
    for (const gate of gates) gate.resolve();
    const statuses = await Promise.all(answers);

    expect(statuses.filter((status) => status === 200)).toHaveLength(3);
    expect(statuses.filter((status) => status === 402)).toHaveLength(7);
    const view = await send('GET', `${replicas[1].url}/v1/admin/budgets/acme`, { headers: AS_ADMIN });
    expect(view.body).toMatchObject({ spentUsd: 0.0006, reservedUsd: 0 });
  });

  it('answers on one replica from the cache the other filled', async () => {
    hold = false;
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
