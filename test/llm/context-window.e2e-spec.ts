import { createTestApp, type TestApp } from '../support/create-app';
import { expectEnvelope } from '../support/envelope';
import { send } from '../support/http-client';
import { anthropicMessage, openaiAnswer } from '../support/llm-answers';
import { testTenant } from '../support/tenants';
import { json, Upstream } from '../support/upstream';

// A context-window failover with each wire's own refusal, from real servers on loopback:
// OpenAI's `code: context_length_exceeded`, Anthropic's `invalid_request_error` whose message
// says the prompt is too long. Either moves the request at once to a larger window, never a
// smaller one; with none left the client gets 400 naming the sizes.

const ACME = testTenant('acme');
const PROMPT = 'a long conversation, secret';

const OPENAI_TOO_LONG = json(400, {
  error: {
    message: "This model's maximum context length is 16385 tokens. However, you requested 20000 tokens.",
    type: 'invalid_request_error',
    param: 'messages',
    code: 'context_length_exceeded',
  },
});
const ANTHROPIC_TOO_LONG = json(400, {
  type: 'error',
  error: { type: 'invalid_request_error', message: 'prompt is too long: 208310 tokens > 200000 maximum' },
});

describe('context-window failover across wires', () => {
  const started: Upstream[] = [];
  let app: TestApp;

  afterEach(async () => {
    await app?.close();
    await Promise.all(started.splice(0).map((upstream) => upstream.close()));
  });

  async function upstream(handler: Parameters<typeof Upstream.start>[0]): Promise<Upstream> {
    const server = await Upstream.start(handler);
    started.push(server);
    return server;
  }

  async function start(targets: Array<Record<string, unknown>>): Promise<void> {
    app = await createTestApp({
      auth: { apiKeys: [ACME.apiKey] },
      lanes: { llm: { concurrency: 4, queueCapacity: 4 } },
      llm: { routes: { chat: { lane: 'llm', targets, cache: false, retry: { maxAttempts: 3 } } } },
    });
  }

  const ask = () =>
    send('POST', `${app.url}/v1/chat/completions`, {
      headers: { authorization: `Bearer ${ACME.key}` },
      json: { model: 'chat', messages: [{ role: 'user', content: PROMPT }], max_tokens: 256 },
    });

  it("moves on from OpenAI's context_length_exceeded at once to the larger window, past one no larger", async () => {
    const small = await upstream(OPENAI_TOO_LONG);
    const peer = await upstream(json(200, openaiAnswer('from the peer')));
    const large = await upstream(json(200, anthropicMessage({ content: [{ type: 'text', text: 'from Claude' }] })));
    await start([
      { provider: 'openai', model: 'gpt-small', baseUrl: small.url('/v1'), contextWindow: 16_385 },
      { provider: 'openai', model: 'gpt-peer', baseUrl: peer.url('/v1'), contextWindow: 16_385 },
      { provider: 'anthropic', model: 'claude-haiku-4-5', baseUrl: large.url('/v1'), apiKey: 'sk-ant-test-key' },
    ]);

    const answer = await ask();

    expect(answer.status).toBe(200);
    expect(answer.body.choices[0].message.content).toBe('from Claude');
    expect(answer.headers['x-bulkhead-served-by']).toBe('anthropic/claude-haiku-4-5');
    // Not retried, and the peer's window is no larger.
    expect(small.requests).toHaveLength(1);
    expect(peer.requests).toHaveLength(0);
    expect(large.requests).toHaveLength(1);
  });

  it("reads Anthropic's 'prompt is too long' the same way, and goes to a larger OpenAI window", async () => {
    const small = await upstream(ANTHROPIC_TOO_LONG);
    const peer = await upstream(json(200, openaiAnswer('never')));
    const large = await upstream(json(200, openaiAnswer('from gpt-4.1')));
    await start([
      { provider: 'anthropic', model: 'claude-haiku-4-5', baseUrl: small.url('/v1'), apiKey: 'sk-ant-test-key' },
      { provider: 'openai', model: 'gpt-4o', baseUrl: peer.url('/v1') },
      { provider: 'openai', model: 'gpt-4.1', baseUrl: large.url('/v1') },
    ]);

    const answer = await ask();

    expect(answer.status).toBe(200);
    expect(answer.body.choices[0].message.content).toBe('from gpt-4.1');
    expect(small.requests).toHaveLength(1);
    // gpt-4o's shipped window (128 000) is smaller than claude-haiku-4-5's (200 000).
    expect(peer.requests).toHaveLength(0);
    expect(large.requests).toHaveLength(1);
  });

  it('answers 400 invalid_request naming the sizes, never the prompt or the upstream text, when no larger window is left', async () => {
    const small = await upstream(OPENAI_TOO_LONG);
    const large = await upstream(ANTHROPIC_TOO_LONG);
    await start([
      { provider: 'openai', model: 'gpt-small', baseUrl: small.url('/v1'), contextWindow: 16_385 },
      { provider: 'anthropic', model: 'claude-haiku-4-5', baseUrl: large.url('/v1'), apiKey: 'sk-ant-test-key' },
    ]);

    const answer = await ask();

    const error = expectEnvelope(answer, 400, 'invalid_request');
    expect(error.message).toMatch(
      /^the request needs up to \d+ tokens \(input estimate \d+ \+ output cap 256\); the largest context window of route 'chat' is 200000 tokens; anthropic\/claude-haiku-4-5 \(context window 200000\) refused it as too long/,
    );
    expect(JSON.stringify(answer.body)).not.toContain('secret');
    expect(JSON.stringify(answer.body)).not.toContain('208310');
    expect(small.requests).toHaveLength(1);
    expect(large.requests).toHaveLength(1);
  });

  it('never sends a request to a target whose window cannot hold it', async () => {
    const small = await upstream(json(200, openaiAnswer('never')));
    const large = await upstream(json(200, openaiAnswer('from the large window')));
    await start([
      { provider: 'openai', model: 'gpt-tiny', baseUrl: small.url('/v1'), contextWindow: 200 },
      { provider: 'openai', model: 'gpt-large', baseUrl: large.url('/v1'), contextWindow: 100_000 },
    ]);

    const answer = await ask();

    expect(answer.status).toBe(200);
    expect(answer.body.choices[0].message.content).toBe('from the large window');
    expect(small.requests).toHaveLength(0);
  });
});
