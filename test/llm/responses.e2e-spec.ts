import OpenAI from 'openai';
import { PLATFORMS, type TestApp } from '../support/create-app';
import { send } from '../support/http-client';
import { ACME, errorOf, POOR, SLOW, startIngressApp } from '../support/llm-ingress-app';

const WEATHER_TOOL = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
  strict: true,
};

const client = (app: TestApp, key: string) => new OpenAI({ baseURL: `${app.url}/v1`, apiKey: key, maxRetries: 0 });

/**
 * `POST /v1/responses` through OpenAI's own SDK pointed at the service: the same
 * pipeline as the chat route.
 */
describe.each(PLATFORMS)('the OpenAI Responses API, on %s', (platform) => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startIngressApp(platform);
  });

  afterAll(() => app.close());

  it('answers responses.create with a response object, whose output_text the SDK reads', async () => {
    const { data: response, response: raw } = await client(app, ACME.key)
      .responses.create({ model: 'echo', instructions: 'Be brief.', input: 'hello there', max_output_tokens: 100 })
      .withResponse();

    expect(response).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'echo-1',
      output: [
        {
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'hello there' }],
        },
      ],
      usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number), total_tokens: expect.any(Number) },
      instructions: 'Be brief.',
      max_output_tokens: 100,
      store: true,
      bulkhead: { servedBy: 'fake/echo-1', attempts: 1, fromCache: false },
    });
    expect(response.id).toMatch(/^resp_/);
    expect(response.output_text).toBe('hello there');
    expect(raw.headers.get('x-bulkhead-served-by')).toBe('fake/echo-1');
  });

  it('streams typed events that end in response.completed with the whole response', async () => {
    const stream = await client(app, ACME.key).responses.create({
      model: 'echo',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'a streamed answer of several chunks' }] }],
      stream: true,
    });
    const types: string[] = [];
    let text = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }

    expect(text).toBe('a streamed answer of several chunks');
    expect(types.slice(0, 4)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
    ]);
    expect(types.slice(-4)).toEqual([
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(completed).toMatchObject({ status: 'completed', usage: { output_tokens: expect.any(Number) } });
    expect(completed?.output_text ?? completed?.output[0]).toBeTruthy();
  });

  it('runs a function tool round trip: function_call, then its function_call_output sent back', async () => {
    const openai = client(app, ACME.key);
    const first = await openai.responses.create({
      model: 'tools',
      input: 'What is the weather in Paris?',
      tools: [WEATHER_TOOL],
    });
    const call = first.output.find((item) => item.type === 'function_call');

    expect(call).toMatchObject({
      type: 'function_call',
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
      status: 'completed',
    });

    const second = await openai.responses.create({
      model: 'tools',
      input: [
        { role: 'user', content: 'What is the weather in Paris?' },
        ...(first.output as OpenAI.Responses.ResponseInputItem[]),
        {
          type: 'function_call_output',
          call_id: call!.type === 'function_call' ? call!.call_id : '',
          output: '21 C, clear',
        },
      ],
      tools: [WEATHER_TOOL],
    });

    expect(second.output_text).toBe('Sunny in Paris.');
  });

  it('streams a function call as function_call_arguments events, through the SDK stream helper', async () => {
    const stream = client(app, ACME.key).responses.stream({
      model: 'tools-streamed',
      input: 'What is the weather in Paris, streamed?',
      tools: [WEATHER_TOOL],
    });
    const types: string[] = [];
    stream.on('event', (event) => types.push(event.type));
    const response = await stream.finalResponse();

    expect(response.output).toEqual([
      expect.objectContaining({ type: 'function_call', name: 'get_weather', arguments: '{"city":"Paris"}' }),
    ]);
    expect(types).toContain('response.function_call_arguments.delta');
    expect(types).toContain('response.function_call_arguments.done');
  });

  it('fails over before the first content of a stream, unseen by the client', async () => {
    const response = await client(app, ACME.key)
      .responses.stream({ model: 'failover', input: 'still answered' })
      .finalResponse();

    expect(response.model).toBe('up-1');
    expect(response.output_text).toBe('still answered');
  });

  it('ends a stream cut after its first content with an error event, which the SDK raises', async () => {
    const failure = await errorOf(
      client(app, ACME.key).responses.stream({ model: 'cut', input: 'this answer will be cut short' }).finalResponse(),
    );

    expect(failure).toBeInstanceOf(OpenAI.APIError);
  });

  it('answers a repeated request from the cache', async () => {
    const openai = client(app, ACME.key);
    await openai.responses.create({ model: 'cached', input: 'cache me' });
    const again = await openai.responses.create({ model: 'cached', input: 'cache me' });

    expect(again).toMatchObject({ output_text: 'cache me', bulkhead: { fromCache: true } });
  });

  it("refuses as OpenAI's typed errors: an unknown model, a rate limit, a budget, an unknown previous response, a built-in tool", async () => {
    const unknown = await errorOf(client(app, ACME.key).responses.create({ model: 'nope', input: 'hi' }));
    const slow = client(app, SLOW.key);
    await slow.responses.create({ model: 'echo', input: 'the one of this minute' });
    const limited = await errorOf(slow.responses.create({ model: 'echo', input: 'one more' }));
    const broke = await errorOf(
      client(app, POOR.key).responses.create({ model: 'echo', input: 'too dear', max_output_tokens: 1000 }),
    );
    const stored = await errorOf(
      client(app, ACME.key).responses.create({ model: 'echo', input: 'go on', previous_response_id: 'resp_unknown' }),
    );
    const search = await send('POST', `${app.url}/v1/responses`, {
      json: { model: 'echo', input: 'search', tools: [{ type: 'web_search' }] },
      headers: ACME.headers,
    });

    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect(broke).toMatchObject({ status: 402, code: 'budget_exceeded' });
    expect(stored).toBeInstanceOf(OpenAI.BadRequestError);
    expect(stored).toMatchObject({ code: 'previous_response_not_found', param: 'previous_response_id' });
    expect(search.status).toBe(400);
    expect(search.body).toMatchObject({
      error: { type: 'invalid_request', message: expect.stringContaining('"web_search"') },
    });
  });
});
