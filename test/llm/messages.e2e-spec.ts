import Anthropic from '@anthropic-ai/sdk';
import { PLATFORMS, type TestApp } from '../support/create-app';
import { send } from '../support/http-client';
import { ACME, errorOf, POOR, SLOW, startIngressApp } from '../support/llm-ingress-app';

const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'The weather in a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};

const client = (app: TestApp, key: string) => new Anthropic({ baseURL: app.url, apiKey: key, maxRetries: 0 });
const ask = (text: string) => [{ role: 'user' as const, content: text }];

/**
 * `POST /v1/messages` and `/v1/messages/count_tokens`, through Anthropic's own SDK pointed at the
 * service (`baseURL`, a Bulkhead key as `apiKey`): the same pipeline as the chat route.
 */
describe.each(PLATFORMS)('the Anthropic Messages API, on %s', (platform) => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startIngressApp(platform);
  });

  afterAll(() => app.close());

  it("answers messages.create with Anthropic's message", async () => {
    const { data: message, response } = await client(app, ACME.key)
      .messages.create({ model: 'echo', max_tokens: 100, system: 'Be brief.', messages: ask('hello there') })
      .withResponse();

    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'echo-1',
      content: [{ type: 'text', text: 'hello there' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) },
      bulkhead: { servedBy: 'fake/echo-1', attempts: 1, fromCache: false },
    });
    expect(message.id).toMatch(/^msg_/);
    expect(response.headers.get('x-bulkhead-served-by')).toBe('fake/echo-1');
  });

  it('streams with .stream(): the events build the same message', async () => {
    const stream = client(app, ACME.key).messages.stream({
      model: 'echo',
      max_tokens: 100,
      messages: ask('a streamed answer of several chunks'),
    });
    const types: string[] = [];
    stream.on('streamEvent', (event) => types.push(event.type));
    const message = await stream.finalMessage();

    expect(message.content).toEqual([{ type: 'text', text: 'a streamed answer of several chunks' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    expect(types[0]).toBe('message_start');
    expect(types).toContain('content_block_delta');
    expect(types.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
  });

  it('runs a tool round trip: tool_use, then the tool_result sent back', async () => {
    const anthropic = client(app, ACME.key);
    const first = await anthropic.messages.create({
      model: 'tools',
      max_tokens: 200,
      tools: [WEATHER_TOOL],
      tool_choice: { type: 'auto' },
      messages: ask('What is the weather in Paris?'),
    });
    const use = first.content.find((block) => block.type === 'tool_use');

    expect(first.stop_reason).toBe('tool_use');
    expect(use).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } });

    const second = await anthropic.messages.create({
      model: 'tools',
      max_tokens: 200,
      tools: [WEATHER_TOOL],
      messages: [
        ...ask('What is the weather in Paris?'),
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: use!.type === 'tool_use' ? use!.id : '', content: '21 C, clear' },
          ],
        },
      ],
    });

    expect(second.content).toEqual([{ type: 'text', text: 'Sunny in Paris.' }]);
    expect(second.stop_reason).toBe('end_turn');
  });

  it('streams a tool use as input_json_delta events', async () => {
    const stream = client(app, ACME.key).messages.stream({
      model: 'tools-streamed',
      max_tokens: 200,
      tools: [WEATHER_TOOL],
      messages: ask('What is the weather in Paris, streamed?'),
    });
    const deltas: string[] = [];
    stream.on('streamEvent', (event) => {
      if (event.type === 'content_block_delta') deltas.push(event.delta.type);
    });
    const message = await stream.finalMessage();

    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([
      { type: 'tool_use', id: expect.any(String), name: 'get_weather', input: { city: 'Paris' } },
    ]);
    expect(deltas).toContain('input_json_delta');
  });

  it('counts tokens with its own estimate, and says so', async () => {
    const { data, response } = await client(app, ACME.key)
      .messages.countTokens({ model: 'echo', messages: ask('how many tokens is this?') })
      .withResponse();

    expect(data.input_tokens).toBeGreaterThan(0);
    expect(response.headers.get('x-bulkhead-token-count')).toBe('estimate');
  });

  it('fails over before the first content of a stream: the client sees only the second target', async () => {
    const message = await client(app, ACME.key)
      .messages.stream({ model: 'failover', max_tokens: 100, messages: ask('still answered') })
      .finalMessage();

    expect(message.model).toBe('up-1');
    expect(message.content).toEqual([{ type: 'text', text: 'still answered' }]);
  });

  it('ends a stream cut after its first content with an error event, which the SDK throws', async () => {
    const failure = await errorOf(
      client(app, ACME.key)
        .messages.stream({ model: 'cut', max_tokens: 100, messages: ask('this answer will be cut short') })
        .finalMessage(),
    );

    expect(failure).toBeInstanceOf(Anthropic.APIError);
    expect(String((failure as Error).message)).toMatch(/api_error|overloaded_error/);
  });

  it('answers a repeated request from the cache', async () => {
    const anthropic = client(app, ACME.key);
    await anthropic.messages.create({ model: 'cached', max_tokens: 50, messages: ask('cache me') });
    const again = await anthropic.messages.create({ model: 'cached', max_tokens: 50, messages: ask('cache me') });

    expect(again).toMatchObject({ content: [{ type: 'text', text: 'cache me' }], bulkhead: { fromCache: true } });
  });

  it("refuses as Anthropic's typed errors: an unknown model, a rate limit, a budget, a server tool, no max_tokens", async () => {
    const unknown = await errorOf(
      client(app, ACME.key).messages.create({ model: 'nope', max_tokens: 10, messages: ask('hi') }),
    );
    const slow = client(app, SLOW.key);
    await slow.messages.create({ model: 'echo', max_tokens: 10, messages: ask('the one of this minute') });
    const limited = await errorOf(slow.messages.create({ model: 'echo', max_tokens: 10, messages: ask('one more') }));
    const broke = await errorOf(
      client(app, POOR.key).messages.create({ model: 'echo', max_tokens: 1000, messages: ask('too dear') }),
    );
    const server = await send('POST', `${app.url}/v1/messages`, {
      json: {
        model: 'echo',
        max_tokens: 10,
        messages: ask('search'),
        tools: [{ type: 'web_search_20250305', name: 'web_search' }],
      },
      headers: { 'x-api-key': ACME.key, 'anthropic-version': '2023-06-01' },
    });
    const noMax = await send('POST', `${app.url}/v1/messages`, {
      json: { model: 'echo', messages: ask('hi') },
      headers: { 'x-api-key': ACME.key },
    });

    expect(unknown).toBeInstanceOf(Anthropic.NotFoundError);
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect((limited as InstanceType<typeof Anthropic.RateLimitError>).headers.get('retry-after')).toMatch(/^\d+$/);
    expect(broke).toMatchObject({
      status: 402,
      error: { type: 'error', error: { type: 'billing_error', kind: 'budget_exceeded' } },
    });
    expect(server.status).toBe(400);
    expect(server.body).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringContaining('web_search_20250305') },
    });
    expect(noMax.status).toBe(400);
    expect(noMax.body).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'max_tokens: is required' },
    });
  });
});
