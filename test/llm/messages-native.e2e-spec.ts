import Anthropic from '@anthropic-ai/sdk';
import type { ServerResponse } from 'node:http';
import { createTestApp, type TestApp } from '../support/create-app';
import { send } from '../support/http-client';
import { errorOf } from '../support/llm-ingress-app';
import { testTenant } from '../support/tenants';
import { json, Upstream, type UpstreamRequest } from '../support/upstream';

const ACME = testTenant('acme');
const PROVIDER_KEY = 'sk-ant-provider-key-of-the-config';
const BETA = 'interleaved-thinking-2025-05-14';
const SIGNATURE = 'EqQBCkYIBxgCKkBsignature-of-the-thinking';

/** Claude's answer with its thinking first: what a translation into Chat Completions would lose. */
const THOUGHTFUL = {
  id: 'msg_native_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-native-test',
  content: [
    { type: 'thinking', thinking: 'The user greets me; I greet back.', signature: SIGNATURE },
    { type: 'text', text: 'Hello!' },
  ],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 20, output_tokens: 14, cache_read_input_tokens: 0, cache_creation_input_tokens: 8 },
};

/** The same answer as Anthropic streams it, thinking and signature deltas included. */
const THOUGHTFUL_EVENTS = [
  {
    type: 'message_start',
    message: { ...THOUGHTFUL, content: [], stop_reason: null, usage: { input_tokens: 20, output_tokens: 1 } },
  },
  { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
  { type: 'ping' },
  { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'The user greets me; ' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'I greet back.' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: SIGNATURE } },
  { type: 'content_block_stop', index: 0 },
  { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Hello!' } },
  { type: 'content_block_stop', index: 1 },
  { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 14 } },
  { type: 'message_stop' },
];

/** A fake Anthropic: the message above, or its events when asked to stream (cut after `cutAfter` events). */
function anthropicAnswering(options: { cutAfter?: number } = {}) {
  return (request: UpstreamRequest, response: ServerResponse) => {
    if (!(JSON.parse(request.body) as { stream?: boolean }).stream) {
      json(200, THOUGHTFUL)(request, response);
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const events = THOUGHTFUL_EVENTS.slice(0, options.cutAfter);
    const text = events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('');
    if (options.cutAfter === undefined) response.end(text);
    else response.write(text, () => response.socket?.destroy());
  };
}

/** A request that only the Messages API can say: thinking, cache_control, a document, metadata. */
const RICH_REQUEST = {
  model: 'claude',
  max_tokens: 2048,
  thinking: { type: 'enabled' as const, budget_tokens: 1024 },
  system: [{ type: 'text' as const, text: 'Be warm.', cache_control: { type: 'ephemeral' as const } }],
  metadata: { user_id: 'end-user-7' },
  messages: [
    {
      role: 'user' as const,
      content: [
        {
          type: 'document' as const,
          source: { type: 'text' as const, media_type: 'text/plain' as const, data: 'Notes.' },
        },
        { type: 'text' as const, text: 'Hello', cache_control: { type: 'ephemeral' as const } },
      ],
    },
  ],
};

/**
 * A Messages request to a route whose target speaks the Messages API itself goes nearly as sent:
 * thinking, cache_control, documents, `anthropic-beta` and fields Bulkhead does not know reach
 * the model, and its answer (thinking blocks and their signatures, which a tool loop must send
 * back) comes back whole, streamed or not, from the provider or the cache. Another target gets
 * the translation.
 */
describe('the Messages API to an Anthropic target, as sent', () => {
  let app: TestApp;
  let anthropic: Upstream;

  beforeEach(async () => {
    anthropic = await Upstream.start(anthropicAnswering());
    const claude = {
      provider: 'anthropic',
      model: 'claude-native-test',
      baseUrl: anthropic.url('/v1'),
      apiKey: PROVIDER_KEY,
    };
    app = await createTestApp({
      auth: { allowAnonymous: false, apiKeys: [ACME.apiKey] },
      lanes: { llm: { concurrency: 4, queueCapacity: 4 } },
      llm: {
        routes: {
          claude: { lane: 'llm', targets: [claude] },
          'claude-cached': { lane: 'llm', cache: true, targets: [claude] },
          'claude-or-fake': {
            lane: 'llm',
            retry: { maxAttempts: 1 },
            targets: [claude, { provider: 'fake', model: 'fake-backup' }],
          },
        },
      },
    });
  });

  afterEach(async () => {
    await app.close();
    await anthropic.close();
  });

  const client = () =>
    new Anthropic({ baseURL: app.url, apiKey: ACME.key, maxRetries: 0, defaultHeaders: { 'anthropic-beta': BETA } });
  const sentBody = (index = 0) => JSON.parse(anthropic.requests[index].body) as Record<string, unknown>;

  it('sends the request as it came, with its betas, and answers the message as Claude gave it', async () => {
    const { data: message, response } = await client()
      .messages.create({ ...RICH_REQUEST, future_field: { kept: true } } as Anthropic.MessageCreateParamsNonStreaming)
      .withResponse();

    const { model: _model, ...asSent } = { ...RICH_REQUEST, future_field: { kept: true } };
    expect(sentBody()).toEqual({ model: 'claude-native-test', ...asSent });
    expect(anthropic.requests[0].headers['anthropic-beta']).toBe(BETA);
    expect(anthropic.requests[0].headers['x-api-key']).toBe(PROVIDER_KEY);
    expect(message).toMatchObject({ ...THOUGHTFUL, bulkhead: { servedBy: 'anthropic/claude-native-test' } });
    expect(response.headers.get('x-bulkhead-served-by')).toBe('anthropic/claude-native-test');
  });

  it('streams the events as Claude sent them: thinking, its signature, then the text', async () => {
    const stream = client().messages.stream(RICH_REQUEST);
    const thoughts: string[] = [];
    stream.on('thinking', (delta) => thoughts.push(delta));
    const message = await stream.finalMessage();

    expect(sentBody().stream).toBe(true);
    expect(thoughts).toEqual(['The user greets me; ', 'I greet back.']);
    expect(message.content).toEqual(THOUGHTFUL.content);
    expect(message.usage).toMatchObject({ input_tokens: 20, output_tokens: 14 });
    expect(message).toMatchObject({ id: 'msg_native_1', stop_reason: 'end_turn' });
  });

  it('sends the thinking blocks of a tool loop back to the model untouched', async () => {
    const toolUse = { type: 'tool_use' as const, id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } };
    const loop = {
      ...RICH_REQUEST,
      tools: [{ name: 'get_weather', input_schema: { type: 'object' as const } }],
      messages: [
        { role: 'user' as const, content: 'Weather in Paris?' },
        {
          role: 'assistant' as const,
          content: [{ type: 'thinking' as const, thinking: 'I should call the tool.', signature: SIGNATURE }, toolUse],
        },
        {
          role: 'user' as const,
          content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_1', content: 'Sunny' }],
        },
      ],
    };

    await client().messages.create(loop);

    expect(sentBody().messages).toEqual(loop.messages);
  });

  it('replays a cached answer whole, thinking included, to a stream as to a completion', async () => {
    const anthropicClient = client();
    const first = await anthropicClient.messages.stream({ ...RICH_REQUEST, model: 'claude-cached' }).finalMessage();
    const streamed = await anthropicClient.messages.stream({ ...RICH_REQUEST, model: 'claude-cached' }).finalMessage();
    const whole = await anthropicClient.messages.create({ ...RICH_REQUEST, model: 'claude-cached' });

    expect(anthropic.requests).toHaveLength(1);
    expect(streamed.content).toEqual(first.content);
    expect(streamed.content[0]).toEqual(THOUGHTFUL.content[0]);
    expect(whole).toMatchObject({ content: THOUGHTFUL.content, bulkhead: { fromCache: true } });
  });

  it('keys the cache on what only the Messages API says: another thinking budget is another answer', async () => {
    const anthropicClient = client();
    await anthropicClient.messages.create({ ...RICH_REQUEST, model: 'claude-cached' });
    await anthropicClient.messages.create({
      ...RICH_REQUEST,
      model: 'claude-cached',
      thinking: { type: 'enabled', budget_tokens: 1500 },
    });

    expect(anthropic.requests).toHaveLength(2);
  });

  it('refuses an Idempotency-Key sent again with another thinking budget', async () => {
    const headers = { 'x-api-key': ACME.key, 'idempotency-key': 'native-key-1' };
    const first = await send('POST', `${app.url}/v1/messages`, { json: RICH_REQUEST, headers });
    const other = await send('POST', `${app.url}/v1/messages`, {
      json: { ...RICH_REQUEST, thinking: { type: 'enabled', budget_tokens: 1500 } },
      headers,
    });

    expect(first.status).toBe(200);
    expect(other.status).toBe(422);
    expect(other.body).toMatchObject({ type: 'error', error: { kind: 'idempotency_conflict' } });
  });

  it('fails over to a target of another API with the translation: thinking left out, the text document as text', async () => {
    anthropic.use(json(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));

    const message = await client().messages.create({ ...RICH_REQUEST, model: 'claude-or-fake' });

    expect(anthropic.requests).toHaveLength(1);
    expect(message.model).toBe('fake-backup');
    // The fake echoes the user's text parts: the document's and the question's.
    expect(message.content).toEqual([{ type: 'text', text: 'Notes.Hello' }]);
  });

  it('commits a stream at its first thinking: a cut after it is an error event, not a failover', async () => {
    anthropic.use(anthropicAnswering({ cutAfter: 4 }));
    const stream = client().messages.stream({ ...RICH_REQUEST, model: 'claude-or-fake' });
    const thoughts: string[] = [];
    stream.on('thinking', (delta) => thoughts.push(delta));

    const failure = await errorOf(stream.finalMessage());

    expect(thoughts).toEqual(['The user greets me; ']);
    expect(failure).toBeInstanceOf(Anthropic.APIError);
  });

  it('refuses an anthropic-beta that is not a list of feature names', async () => {
    const answer = await send('POST', `${app.url}/v1/messages`, {
      json: RICH_REQUEST,
      headers: { 'x-api-key': ACME.key, 'anthropic-beta': 'a-feature, not one' },
    });

    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringContaining('anthropic-beta') },
    });
    expect(anthropic.requests).toHaveLength(0);
  });
});
