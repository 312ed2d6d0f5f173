import { type INestApplicationContext, Injectable, Module } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
// What a company's app imports: the package's public entry, and nothing deeper.
import {
  BulkheadModule,
  type ChatChunk,
  type ChatRequest,
  isResilienceError,
  LaneRegistry,
  LlmGateway,
  MetricsRegistry,
} from '../../src/index';
import type { PlatformName } from '../../src/common/nest';
import { PLATFORMS } from '../support/create-app';
import { eventually } from '../support/eventually';
import { parsePromText, sampleValue } from '../support/prom-text';

/** The company's own agent loop: asks the gateway in-process, as the tenant it serves. */
@Injectable()
class AgentLoop {
  constructor(private readonly gateway: LlmGateway) {}

  ask(tenant: string, text: string, model = 'chat', signal?: AbortSignal) {
    return this.gateway.complete(question(model, text), { tenant, signal });
  }

  stream(tenant: string, text: string, model = 'chat') {
    return this.gateway.stream({ ...question(model, text), stream_options: { include_usage: true } }, { tenant });
  }
}

const question = (model: string, text: string): ChatRequest => ({
  model,
  messages: [{ role: 'user', content: text }],
  max_tokens: 1000,
});

@Module({ providers: [AgentLoop] })
class AgentModule {}

const PRICE = { inputPerMTokUsd: 1, outputPerMTokUsd: 1 };

async function collect(stream: AsyncIterable<ChatChunk>): Promise<{ text: string; chunks: ChatChunk[] }> {
  const chunks: ChatChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
  return { text, chunks };
}

/** Where the gateway runs: a module with no HTTP at all, or an app on either platform. */
const HOSTS: ReadonlyArray<PlatformName | 'no HTTP'> = ['no HTTP', ...PLATFORMS];

/**
 * `LlmGateway`, the gateway in-process: a company's own code asks it as a tenant and gets the
 * pipeline of the chat route (failover, budgets, metrics) with no HTTP (docs/embedding.md).
 */
describe.each(HOSTS)('LlmGateway in a company app (%s)', (host) => {
  let moduleRef: INestApplicationContext;
  let agent: AgentLoop;

  beforeAll(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [
        BulkheadModule.forRoot({
          routes: false,
          auth: { allowAnonymous: true },
          lanes: { llm: { concurrency: 2, queueCapacity: 2 } },
          budgets: { tenants: { poor: 0.000001 } },
          llm: {
            routes: {
              chat: {
                lane: 'llm',
                targets: [
                  { provider: 'fake', model: 'down-1', script: [{ status: 503 }] },
                  { provider: 'fake', model: 'up-1' },
                ],
              },
              slow: { lane: 'llm', targets: [{ provider: 'fake', model: 'slow-1', script: [{ delayMs: 60_000 }] }] },
              drip: {
                lane: 'llm',
                targets: [{ provider: 'fake', model: 'drip-1', script: [{ chunkDelayMs: 60_000 }] }],
              },
            },
            prices: { 'fake/down-1': PRICE, 'fake/up-1': PRICE, 'fake/slow-1': PRICE, 'fake/drip-1': PRICE },
          },
        }),
        AgentModule,
      ],
    })
      .compile()
      .then((compiled) =>
        host === 'no HTTP'
          ? compiled
          : compiled.createNestApplication(host === 'express' ? new ExpressAdapter() : new FastifyAdapter(), {
              logger: false,
            }),
      );
    await moduleRef.init();
    agent = moduleRef.get(AgentLoop);
  });

  afterAll(() => moduleRef.close());

  it('answers a request through the route: failover included, and its cost', async () => {
    const answer = await agent.ask('acme', 'hello from the loop');

    // Two attempts on the first target (a 503 is retried), then the second.
    expect(answer).toMatchObject({ servedBy: 'fake/up-1', attempts: 3, cache: 'miss', replayed: false });
    expect(answer.completion.choices[0].message.content).toBe('hello from the loop');
    expect(answer.costUsd).toBeGreaterThan(0);
  });

  it('answers a repeated request from the cache, at no cost', async () => {
    await agent.ask('acme', 'the same question twice');
    const again = await agent.ask('acme', 'the same question twice');

    expect(again).toMatchObject({ servedBy: 'cache', cache: 'hit', attempts: 0, costUsd: 0 });
    expect(again.completion.choices[0].message.content).toBe('the same question twice');
  });

  it('streams a request chunk by chunk, its usage chunk last', async () => {
    const { text, chunks } = await collect(await agent.stream('acme', 'a streamed answer of several chunks'));

    expect(text).toBe('a streamed answer of several chunks');
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: expect.any(Number) } });
  });

  it('refuses with the kinds the routes answer: an unknown route, a spent budget, a bad tenant name', async () => {
    const kinds = await Promise.all([
      agent.ask('acme', 'x', 'nope').catch((error: unknown) => error),
      agent.ask('poor', 'too dear').catch((error: unknown) => error),
      agent.ask('no spaces allowed', 'x').catch((error: unknown) => error),
    ]);

    expect(kinds.map((error) => (isResilienceError(error) ? error.kind : error))).toEqual([
      'not_found',
      'budget_exceeded',
      'invalid_request',
    ]);
  });

  it('stops a call whose signal aborts, and frees its lane slot', async () => {
    const lane = moduleRef.get(LaneRegistry).get('llm')!;
    const controller = new AbortController();
    const asked = agent.ask('acme', 'wait for me', 'slow', controller.signal).catch((error: unknown) => error);
    await eventually(() => expect(lane.snapshot().active).toBe(1));
    controller.abort();

    const failure = await asked;
    expect(isResilienceError(failure) && failure.kind).toBe('stopped');
    await eventually(() => expect(lane.snapshot().active).toBe(0));
  });

  it('cancels a stream its reader leaves: its provider attempt stopped, its slot freed', async () => {
    const lane = moduleRef.get(LaneRegistry).get('llm')!;
    const stream = await agent.stream('acme', 'an answer whose chunks come a minute apart', 'drip');
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      break;
    }
    const metrics = parsePromText(await moduleRef.get(MetricsRegistry).metrics());

    expect(lane.snapshot().active).toBe(0);
    expect(
      sampleValue(metrics, 'bulkhead_llm_requests_total', { route: 'drip', target: 'fake/drip-1', outcome: 'stopped' }),
    ).toBe(1);
  });
});
