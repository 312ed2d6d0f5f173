import { thrownKindAndMessage } from '../../../test/support/thrown';
import { countTokensRequestSchema } from '../wire';
import { parseMessagesRequest, readMessagesCall } from './messages-request';
import { toChatRequest } from './messages-to-chat-request';

const translate = (body: Record<string, unknown>) =>
  toChatRequest(parseMessagesRequest({ model: 'route', max_tokens: 100, ...body }));

const refusal = (body: unknown): string => thrownKindAndMessage(() => parseMessagesRequest(body));

describe('a Messages request as the Chat Completions request the route runs', () => {
  it('puts system first, and keeps the bound, the sampling and the stop sequences', () => {
    expect(
      translate({
        system: [
          { type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } },
          { type: 'text', text: 'Be kind.' },
        ],
        messages: [{ role: 'user', content: 'hi' }],
        temperature: 0.5,
        top_p: 0.9,
        top_k: 40,
        stop_sequences: ['END'],
        metadata: { user_id: 'user-7' },
      }),
    ).toEqual({
      model: 'route',
      max_tokens: 100,
      messages: [
        { role: 'system', content: 'Be brief.\nBe kind.' },
        { role: 'user', content: 'hi' },
      ],
      temperature: 0.5,
      top_p: 0.9,
      stop: ['END'],
      user: 'user-7',
    });
  });

  it('turns tool uses into tool calls and tool results into tool messages, before the rest of their turn', () => {
    const chat = translate({
      messages: [
        { role: 'user', content: 'weather?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'they want weather', signature: 'sig' },
            { type: 'text', text: 'Let me look.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: [{ type: 'text', text: 'no data' }],
              is_error: true,
            },
            { type: 'text', text: 'and tomorrow?' },
          ],
        },
      ],
      tools: [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: {} } }],
      tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
    });

    expect(chat.messages).toEqual([
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: 'Let me look.',
        tool_calls: [
          { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'Error:\nno data' },
      { role: 'user', content: [{ type: 'text', text: 'and tomorrow?' }] },
    ]);
    expect(chat.tools).toEqual([
      {
        type: 'function',
        function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: {} } },
      },
    ]);
    expect(chat.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
    expect(chat.parallel_tool_calls).toBe(false);
  });

  it.each([
    [{ type: 'auto' }, 'auto'],
    [{ type: 'any' }, 'required'],
    [{ type: 'none' }, 'none'],
  ])('translates tool_choice %j as %j', (choice, expected) => {
    expect(translate({ messages: [{ role: 'user', content: 'x' }], tool_choice: choice }).tool_choice).toBe(expected);
  });

  it('sends images as image_url parts: base64 as a data URL, a URL as it is', () => {
    const chat = translate({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
            { type: 'text', text: 'what are these?' },
          ],
        },
      ],
    });

    expect(chat.messages[0].content).toEqual([
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
      { type: 'text', text: 'what are these?' },
    ]);
  });

  it('sends a PDF as a file part and a text document as text; another source stays a document part', () => {
    const pdf = { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' };
    const { messages } = translate({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'document', source: pdf, title: 'report.pdf' },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Notes.' }, title: 'Notes' },
            { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
          ],
        },
      ],
    });

    expect(messages[0].content).toEqual([
      { type: 'file', file: { filename: 'report.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
      { type: 'text', text: 'Notes\n\nNotes.' },
      { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
    ]);
  });

  it('asks for the usage chunk of a stream, which becomes its message_delta', () => {
    const chat = translate({ messages: [{ role: 'user', content: 'x' }], stream: true });

    expect(chat).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('counts tokens without max_tokens', () => {
    const chat = toChatRequest(
      parseMessagesRequest({ model: 'route', messages: [{ role: 'user', content: 'x' }] }, countTokensRequestSchema),
    );

    expect(chat.max_tokens).toBeUndefined();
  });

  it.each<[string, unknown, string]>([
    ['a body that is not an object', [1], 'invalid_request: the body must be a JSON object'],
    [
      'no max_tokens',
      { model: 'r', messages: [{ role: 'user', content: 'x' }] },
      'invalid_request: max_tokens: is required',
    ],
    ['no messages', { model: 'r', max_tokens: 1, messages: [] }, 'invalid_request: messages: must not be empty'],
    [
      'a system role in messages',
      { model: 'r', max_tokens: 1, messages: [{ role: 'system', content: 'x' }] },
      'invalid_request: messages.0.role: Invalid option: expected one of "user"|"assistant"',
    ],
    [
      'a temperature above 1',
      { model: 'r', max_tokens: 1, messages: [{ role: 'user', content: 'x' }], temperature: 1.5 },
      'invalid_request: temperature: Too big: expected number to be <=1',
    ],
    [
      'mcp_servers',
      { model: 'r', max_tokens: 1, messages: [{ role: 'user', content: 'x' }], mcp_servers: [] },
      'invalid_request: mcp_servers: not supported through Bulkhead',
    ],
    [
      'a server tool',
      {
        model: 'r',
        max_tokens: 1,
        messages: [{ role: 'user', content: 'x' }],
        tools: [{ type: 'bash_20250124', name: 'bash' }],
      },
      'invalid_request: tools: the server tool "bash_20250124" is not supported through Bulkhead; send your own tools (name, description, input_schema)',
    ],
  ])('refuses %s', (_what, body, expected) => {
    expect(refusal(body)).toBe(expected);
  });
});

describe('a Messages request as it came, for the targets that speak the Messages API', () => {
  const body = {
    model: 'route',
    max_tokens: 100,
    stream: true,
    thinking: { type: 'enabled', budget_tokens: 50 },
    messages: [
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'héllo', signature: 's' },
          { type: 'redacted_thinking', data: 'abc' },
          { type: 'text', text: 'hello' },
        ],
      },
      { role: 'user', content: 'again' },
    ],
    new_field: 1,
  };

  it("keeps the body (fields Bulkhead does not know too) without the route's name and the stream flag", () => {
    const { passThrough } = readMessagesCall(body, undefined);

    const { model: _model, stream: _stream, ...rest } = body;
    expect(passThrough).toMatchObject({ format: 'anthropic-messages', body: rest });
  });

  it("counts earlier turns' thinking, in UTF-8 bytes, as input the translation does not show", () => {
    expect(readMessagesCall(body, undefined).passThrough.extraInputTokens).toBe(Buffer.byteLength('héllo') + 3);
  });

  it('reads anthropic-beta as comma-separated names, repeated headers too, each once', () => {
    const { passThrough } = readMessagesCall(body, ['a-1, b.2', 'a-1,c_3']);

    expect(passThrough.betas).toEqual(['a-1', 'b.2', 'c_3']);
  });

  it('refuses an anthropic-beta that is not a list of names', () => {
    expect(() => readMessagesCall(body, 'a b')).toThrow(/anthropic-beta/);
    expect(() => readMessagesCall(body, Array.from({ length: 33 }, (_, index) => `f${index}`).join(','))).toThrow(
      /anthropic-beta/,
    );
  });
});
