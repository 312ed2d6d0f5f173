import type { ServerResponse } from 'node:http';
import { createTestApp, type TestApp } from '../support/create-app';
import { eventually } from '../support/eventually';
import { invoke, send } from '../support/http-client';
import { openaiAnswer } from '../support/llm-answers';
import { json, Upstream, type UpstreamHandler } from '../support/upstream';

/**
 * An http tool's upstream and the semantic cache's embedder, each answering badly on purpose
 * (docs/design.md, "The trust boundary: what upstreams send"): one bad answer costs that one
 * call (a tool's `transient`) or that one lookup (a cache miss, the request still served), and
 * the service carries on: the next good answer is used, the lanes are idle, liveness answers.
 */

/** Raw bytes with a content type: what no JSON.stringify would write. */
const raw =
  (text: string, type = 'application/json'): UpstreamHandler =>
  (_request, response: ServerResponse) => {
    response.writeHead(200, { 'content-type': type }).end(text);
  };

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('untrusted upstreams', () => {
  let app: TestApp | undefined;
  const upstreams: Upstream[] = [];

  afterEach(async () => {
    await app?.close();
    app = undefined;
    await Promise.all(upstreams.splice(0).map((upstream) => upstream.close()));
  });

  async function upstream(handler: UpstreamHandler): Promise<Upstream> {
    const started = await Upstream.start(handler);
    upstreams.push(started);
    return started;
  }

  async function serviceStaysWell(): Promise<void> {
    expect((await send('GET', `${app!.url}/health/live`)).status).toBe(200);
    const lanes = (await send('GET', `${app!.url}/v1/lanes`)).body.lanes as Record<
      string,
      { active: number; waiting: number }
    >;
    for (const lane of Object.values(lanes)) expect(lane).toMatchObject({ active: 0, waiting: 0 });
  }

  describe('an http tool', () => {
    it.each<[string, UpstreamHandler]>([
      ['JSON nested 100,000 levels deep', raw(nested(100_000))],
      ['JSON nested 65 levels, one past the limit', raw(nested(65))],
      ['malformed JSON', raw('{"result": tru')],
    ])('answers %s as one call failed transient, and serves the next call', async (_label, bad) => {
      const tool = await upstream(bad);
      app = await createTestApp({
        auth: { allowAnonymous: true },
        lanes: { tools: { concurrency: 2, queueCapacity: 2 } },
        tools: { lookup: { lane: 'tools', kind: 'http', url: tool.url('/lookup'), retry: { maxAttempts: 1 } } },
      });

      const failed = await invoke(app.url, 'lookup', { id: 1 });
      expect(failed.status).toBe(502);
      expect(failed.body.error).toMatchObject({ kind: 'transient' });
      expect(JSON.stringify(failed.body)).not.toContain('[[[');
      expect(tool.requests).toHaveLength(1);

      tool.use(json(200, { found: true }));
      const served = await invoke(app.url, 'lookup', { id: 2 });
      expect(served.status).toBe(200);
      expect(served.body.result).toEqual({ found: true });
      await serviceStaysWell();
    });

    it('serves an answer nested exactly 64 levels deep', async () => {
      const tool = await upstream(raw(nested(64)));
      app = await createTestApp({
        auth: { allowAnonymous: true },
        lanes: { tools: { concurrency: 2, queueCapacity: 2 } },
        tools: { lookup: { lane: 'tools', kind: 'http', url: tool.url('/lookup'), retry: { maxAttempts: 1 } } },
      });
      expect((await invoke(app.url, 'lookup', {})).status).toBe(200);
    });
  });

  describe("the semantic cache's embedder", () => {
    const badAnswers: Array<[string, UpstreamHandler]> = [
      ['a number past float32', json(200, { data: [{ index: 0, embedding: [1e39, 1, 0] }] })],
      ['an index far past the list', json(200, { data: [{ index: 300_000_000, embedding: [1, 0, 0] }] })],
      ['more dimensions than any model has', json(200, { data: [{ embedding: new Array(16_385).fill(1) }] })],
      ['no data', json(200, { object: 'list' })],
      ['JSON nested 100,000 levels deep', raw(nested(100_000))],
      ['HTML', raw('<html>oops</html>', 'text/html')],
    ];

    it('costs the lookup of each bad answer, never the request, and uses the next good answer', async () => {
      const model = await upstream(json(200, openaiAnswer('from the model')));
      const embedder = await upstream(json(500, {}));
      app = await createTestApp({
        auth: { allowAnonymous: true },
        lanes: { llm: { concurrency: 4, queueCapacity: 4 } },
        llm: {
          routes: {
            chat: {
              lane: 'llm',
              targets: [{ provider: 'openai', model: 'gpt-test', baseUrl: model.url('/v1') }],
              semanticCache: true,
            },
          },
          cache: {
            semantic: {
              enabled: true,
              threshold: 0.9,
              embedder: { kind: 'openai', baseUrl: embedder.url('/v1'), model: 'embed', timeoutMs: 5_000 },
            },
          },
        },
      });
      // A new question each time, so the exact cache never answers: only the semantic one can.
      const ask = (question: string) =>
        send('POST', `${app!.url}/v1/chat/completions`, {
          json: { model: 'chat', messages: [{ role: 'user', content: question }] },
        });

      for (const [label, bad] of badAnswers) {
        embedder.use(bad);
        const answered = await ask(`Asked while the embedder answers ${label}?`);
        expect({ label, status: answered.status, cache: answered.headers['x-bulkhead-cache'] }).toEqual({
          label,
          status: 200,
          cache: 'miss',
        });
      }
      expect(model.requests).toHaveLength(badAnswers.length);
      // Each was asked of the embedder twice: for the lookup, and again to store the answer, which
      // happens after the response; wait for the last, so that it does not meet the good embedder.
      await eventually(() => expect(embedder.requests).toHaveLength(2 * badAnswers.length));

      // A good embedder now (one vector for every text): the next request stores its answer, the
      // one after is served from the semantic cache.
      embedder.use(json(200, { data: [{ index: 0, embedding: [0.6, 0.8, 0] }] }));
      expect((await ask('The first question with a good embedder?')).headers['x-bulkhead-cache']).toBe('miss');
      expect((await ask('The second question with a good embedder?')).headers['x-bulkhead-cache']).toBe('semantic');
      expect(model.requests).toHaveLength(badAnswers.length + 1);
      await serviceStaysWell();
    });
  });
});
