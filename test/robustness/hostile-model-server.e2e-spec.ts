import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import { listeningPort, SPAWNED_TEST_TIMEOUT_MS, spawnService, type ServiceProcess } from '../support/spawn-service';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { Upstream } from '../support/upstream';

/**
 * A model server that answers badly on purpose, behind the real process (src/main.ts): every
 * hostile answer costs the request that met it its answer, and nothing else. The process stays
 * up, `/health/live` keeps answering while the hostile answer is read, and afterwards every lane
 * is idle and nothing is held in the budget.
 */

const ACME = testTenant('acme');
const TEST_TIMEOUT_MS = SPAWNED_TEST_TIMEOUT_MS;
/**
 * The slowest a liveness probe may be while a hostile answer is read. The figure is
 * 100 ms on a quiet machine; this bound is wider so a loaded one passes, and still an order of
 * magnitude below the stall it guards against (a sparse array walked for seconds).
 */
const PROBE_BOUND_MS = 1_000;

const HEAD = { id: 'chatcmpl-hostile', object: 'chat.completion.chunk', created: 1_767_225_600, model: 'gpt-test' };
const chunk = (choices: unknown, extra: Record<string, unknown> = {}) => ({ ...HEAD, choices, ...extra });
const delta = (value: unknown) => chunk([{ index: 0, delta: value, finish_reason: null }]);
const FIRST = delta({ role: 'assistant', content: 'Hel' });
const sse = (...events: unknown[]) =>
  events.map((event) => `data: ${typeof event === 'string' ? event : JSON.stringify(event)}\n\n`).join('');

/** OpenAI streams, each with something no chunk may carry. */
const HOSTILE_STREAMS: Record<string, string> = {
  'tool_calls a number, after content': sse(FIRST, delta({ tool_calls: 5 })),
  'tool_calls [null], first': sse(delta({ tool_calls: [null] })),
  'a tool call numbered 300,000,000': sse(
    delta({
      tool_calls: [{ index: 300_000_000, id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
    }),
  ),
  'a choice numbered 300,000,000': sse(chunk([{ index: 300_000_000, delta: { content: 'x' }, finish_reason: null }])),
  'content a number': sse(delta({ content: 7 })),
  'a __proto__ delta': sse(FIRST, `{"choices":[{"index":0,"delta":{"__proto__":{"content":"x"},"content":{}}}]}`),
  'choices not an array, after content': sse(FIRST, chunk({ 0: 'x' })),
  'arguments an object': sse(delta({ tool_calls: [{ index: 0, function: { arguments: { a: 1 } } }] })),
  // 2.2 million characters for a cap of 64 tokens: held whole, a server could fill the process's memory.
  'more text than its output cap allows': sse(
    FIRST,
    ...Array.from({ length: 2_200 }, () => delta({ content: 'x'.repeat(1_000) })),
    // A well-ended stream otherwise: only its size is wrong.
    chunk([], { usage: { prompt_tokens: 3, completion_tokens: 64 } }),
    '[DONE]',
  ),
};

/** OpenAI JSON answers the route reads. */
const HOSTILE_ANSWERS: Record<string, unknown> = {
  'tool_calls [null]': {
    id: 'x',
    choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [null] }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 1 },
  },
  'content an object': {
    id: 'x',
    choices: [{ index: 0, message: { role: 'assistant', content: { text: 'hi' } }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 1 },
  },
};

/** Anthropic's stream events for `/v1/messages`, sent as they came (the native pass-through). */
const anthropicEvents = (...events: unknown[]) =>
  events.map((event) => `event: x\ndata: ${JSON.stringify(event)}\n\n`).join('');
const MESSAGE_START = {
  type: 'message_start',
  message: {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-test',
    content: [],
    usage: { input_tokens: 3, output_tokens: 0 },
  },
};
const HOSTILE_NATIVE: Record<string, string> = {
  'a block numbered 200,000,000': anthropicEvents(MESSAGE_START, {
    type: 'content_block_start',
    index: 200_000_000,
    content_block: { type: 'text', text: '' },
  }),
  'a text delta that is a number': anthropicEvents(
    MESSAGE_START,
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 5 } },
  ),
  'message_start without a message': anthropicEvents({ type: 'message_start', message: null }),
};

describe('a hostile model server behind the real process', () => {
  let upstream: Upstream;
  let service: ServiceProcess;
  let base: string;
  let folder: string;
  let answer: { type: string; body: string } = { type: 'application/json', body: '{}' };

  beforeAll(async () => {
    upstream = await Upstream.start((_request, response) => {
      response.writeHead(200, { 'content-type': answer.type });
      response.end(answer.body);
    });
    folder = mkdtempSync(join(tmpdir(), 'bulkhead-hostile-'));
    const config = join(folder, 'config.yaml');
    writeFileSync(config, configYaml(upstream.url('/v1')));
    service = spawnService({ BULKHEAD_CONFIG: config, PORT: '0' });
    base = `http://127.0.0.1:${await listeningPort(service)}`;
  }, TEST_TIMEOUT_MS);

  afterAll(async () => {
    if (service && service.child.exitCode === null && service.child.signalCode === null) {
      service.child.kill('SIGKILL');
      await service.exited;
    }
    await upstream?.close();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  /** Sends one request while probing `/health/live` every 50 ms: its status and text, the slowest probe. */
  async function probed(path: string, body: Record<string, unknown>) {
    let slowest = 0;
    let probing = true;
    const probes = (async () => {
      while (probing) {
        const started = performance.now();
        const live = await request(`${base}/health/live`);
        await live.body.text();
        expect(live.statusCode).toBe(200);
        slowest = Math.max(slowest, performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    try {
      const response = await request(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...ACME.headers },
        body: JSON.stringify(body),
      });
      const text = await response.body.text();
      // Let at least one probe run after the answer: a stall may outlast the request.
      await new Promise((resolve) => setTimeout(resolve, 120));
      return { status: response.statusCode, text, slowest: () => slowest };
    } finally {
      probing = false;
      await probes;
    }
  }

  async function expectNothingHeld() {
    const lanes = await request(`${base}/v1/lanes`, { headers: ACME.headers });
    const lanesBody = (await lanes.body.json()) as { lanes: Record<string, { active: number; waiting: number }> };
    for (const lane of Object.values(lanesBody.lanes)) expect(lane).toMatchObject({ active: 0, waiting: 0 });
    const budget = await request(`${base}/v1/admin/budgets/acme`, { headers: AS_ADMIN });
    expect(await budget.body.json()).toMatchObject({ reservedUsd: 0 });
  }

  /**
   * The request failed as an upstream's malformed answer does: before anything was sent, the
   * ingress's error (502 `transient` for Chat Completions, 500 `api_error` for Messages, which has
   * no 502); after the commit point, the stream's error event, and no end of the answer.
   */
  function expectOneFailure(result: { status: number; text: string }, end: string) {
    if (result.status === 502) {
      expect(JSON.parse(result.text)).toMatchObject({ error: { kind: 'transient' } });
    } else if (result.status === 500) {
      expect(JSON.parse(result.text)).toMatchObject({ type: 'error', error: { type: 'api_error' } });
    } else {
      expect(result.status).toBe(200);
      expect(result.text).toMatch(/"error"/);
      expect(result.text).not.toContain(end);
    }
  }

  const CHAT = { model: 'oa', messages: [{ role: 'user', content: 'hello' }], max_tokens: 64 };
  const MESSAGES = (model: string) => ({ model, max_tokens: 64, stream: true, messages: CHAT.messages });
  /** Each ingress a model server's stream is read for: its path, a streamed request, how its answer ends. */
  const INGRESSES = [
    { path: '/v1/chat/completions', body: { ...CHAT, stream: true }, end: 'data: [DONE]' },
    { path: '/v1/messages', body: MESSAGES('oa'), end: 'message_stop' },
    { path: '/v1/responses', body: { model: 'oa', input: 'hello', stream: true }, end: 'response.completed' },
  ];

  /** Sends `body` to `path` against a model server answering `stream`: one request's failure, and nothing else. */
  async function expectItCostsOneRequest(stream: string, path: string, body: Record<string, unknown>, end: string) {
    answer = { type: 'text/event-stream', body: stream };
    const result = await probed(path, body);

    expectOneFailure(result, end);
    expect(result.slowest()).toBeLessThan(PROBE_BOUND_MS);
    expect(service.child.exitCode).toBeNull();
    await expectNothingHeld();
  }

  it.each(
    Object.entries(HOSTILE_STREAMS).flatMap(([name, stream]) =>
      INGRESSES.map(({ path, body, end }) => [name, path, stream, body, end] as const),
    ),
  )(
    'an OpenAI stream with %s, read for %s, costs its request and nothing else',
    (_name, path, stream, body, end) => expectItCostsOneRequest(stream, path, body, end),
    TEST_TIMEOUT_MS,
  );

  it.each(Object.entries(HOSTILE_ANSWERS))(
    'an OpenAI answer with %s is one 502, and nothing else',
    async (_name, body) => {
      answer = { type: 'application/json', body: JSON.stringify(body) };
      const result = await probed('/v1/chat/completions', CHAT);

      expect(result.status).toBe(502);
      expect(JSON.parse(result.text)).toMatchObject({ error: { kind: 'transient' } });
      expect(service.child.exitCode).toBeNull();
      await expectNothingHeld();
    },
    TEST_TIMEOUT_MS,
  );

  it.each(Object.entries(HOSTILE_NATIVE))(
    'an Anthropic stream with %s, passed through /v1/messages, costs its request and nothing else',
    (_name, stream) => expectItCostsOneRequest(stream, '/v1/messages', MESSAGES('an'), 'message_stop'),
    TEST_TIMEOUT_MS,
  );

  it(
    'still answers a well-formed stream afterwards',
    async () => {
      answer = {
        type: 'text/event-stream',
        body: sse(
          FIRST,
          delta({ content: 'lo' }),
          chunk([], { usage: { prompt_tokens: 3, completion_tokens: 2 } }),
          '[DONE]',
        ),
      };
      const result = await probed('/v1/chat/completions', { ...CHAT, stream: true });

      expect(result.text).toContain('"Hel"');
      expect(result.text).toContain('data: [DONE]');
      await expectNothingHeld();
    },
    TEST_TIMEOUT_MS,
  );
});

function configYaml(baseUrl: string): string {
  // Every hostile answer is a failure: the breaker would otherwise refuse the ones after it.
  const breaker = { volumeThreshold: 1000 };
  const config = {
    auth: { allowAnonymous: false, adminToken: ADMIN_TOKEN, apiKeys: [ACME.apiKey] },
    store: { kind: 'memory' },
    lanes: { llm: { concurrency: 4, queueCapacity: 8 } },
    budgets: { period: 'day', defaultUsd: 10 },
    containment: { egress: { allowHosts: ['*'], allowPrivateCidrs: ['127.0.0.1/32'] } },
    llm: {
      routes: {
        oa: {
          lane: 'llm',
          targets: [{ provider: 'openai', model: 'gpt-test', baseUrl }],
          retry: { maxAttempts: 1 },
          breaker,
        },
        an: {
          lane: 'llm',
          targets: [{ provider: 'anthropic', model: 'claude-test', baseUrl, apiKey: 'k' }],
          retry: { maxAttempts: 1 },
          breaker,
        },
      },
      prices: {
        'openai/gpt-test': { inputPerMTokUsd: 1, outputPerMTokUsd: 1 },
        'anthropic/claude-test': { inputPerMTokUsd: 1, outputPerMTokUsd: 1 },
      },
    },
  };
  // JSON is YAML: the config loader reads it as it is.
  return JSON.stringify(config, null, 2);
}
