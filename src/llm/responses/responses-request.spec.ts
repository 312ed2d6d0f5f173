import { thrownKindAndMessage } from '../../../test/support/thrown';
import { parseResponsesRequest } from './responses-request';
import { toChatRequest } from './responses-to-chat-request';
import type { ResolvedResponsesRequest } from './stored/response-references';

/** Bodies without references, which need no resolving. */
const translate = (body: Record<string, unknown>) =>
  toChatRequest(parseResponsesRequest({ model: 'route', ...body }) as ResolvedResponsesRequest);

const refusal = (body: Record<string, unknown>): string =>
  thrownKindAndMessage(() => parseResponsesRequest({ model: 'route', input: 'x', ...body }));

describe('a Responses request as the Chat Completions request the route runs', () => {
  it('puts instructions first and keeps the bound, the sampling and the user', () => {
    expect(
      translate({
        instructions: 'Be brief.',
        input: 'hi',
        max_output_tokens: 50,
        temperature: 0.2,
        top_p: 0.5,
        user: 'u-1',
      }),
    ).toEqual({
      model: 'route',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
      max_tokens: 50,
      temperature: 0.2,
      top_p: 0.5,
      user: 'u-1',
    });
  });

  it("joins an answer's text and its function calls in one assistant turn, and their outputs as tool messages", () => {
    const chat = translate({
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'weather?' },
            { type: 'input_image', image_url: 'https://example.com/a.png' },
          ],
        },
        { type: 'reasoning', id: 'rs_1', summary: [] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Looking.', annotations: [] }] },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: 'call_2', name: 'get_weather', arguments: '{"city":"Rome"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '21 C' },
        { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: '25 C' }] },
      ],
      tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object' }, strict: true }],
      tool_choice: { type: 'function', name: 'get_weather' },
      parallel_tool_calls: true,
    });

    expect(chat.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'weather?' },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
        ],
      },
      {
        role: 'assistant',
        content: 'Looking.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '21 C' },
      { role: 'tool', tool_call_id: 'call_2', content: '25 C' },
    ]);
    expect(chat.tools).toEqual([
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' }, strict: true } },
    ]);
    expect(chat.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
    expect(chat.parallel_tool_calls).toBe(true);
  });

  it('sends text.format as response_format', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };

    expect(
      translate({ input: 'x', text: { format: { type: 'json_schema', name: 'answer', schema, strict: true } } })
        .response_format,
    ).toEqual({
      type: 'json_schema',
      json_schema: { name: 'answer', schema, strict: true },
    });
    expect(translate({ input: 'x', text: { format: { type: 'json_object' } } }).response_format).toEqual({
      type: 'json_object',
    });
    expect(translate({ input: 'x', text: { format: { type: 'text' } } }).response_format).toBeUndefined();
  });

  it('asks for the usage chunk of a stream, which completes its response', () => {
    expect(translate({ input: 'x', stream: true })).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('takes store and reasoning, and passes neither on', () => {
    const chat = translate({ input: 'x', store: true, reasoning: { effort: 'low' } });

    expect(chat).toEqual({ model: 'route', messages: [{ role: 'user', content: 'x' }] });
  });

  it('reads a previous response id and item references, for the stored responses to resolve', () => {
    const request = parseResponsesRequest({
      model: 'route',
      previous_response_id: 'resp_1',
      input: [
        { type: 'item_reference', id: 'msg_1' },
        { role: 'user', content: 'go on' },
      ],
    });

    expect(request.previous_response_id).toBe('resp_1');
    expect(request.input).toEqual([
      { type: 'item_reference', id: 'msg_1' },
      { role: 'user', content: 'go on' },
    ]);
  });

  it.each<[string, Record<string, unknown>, string]>([
    [
      'a conversation',
      { conversation: 'conv_1' },
      'invalid_request: conversation: Bulkhead keeps no conversations: send the whole conversation in input',
    ],
    [
      'an item reference without an id',
      { input: [{ type: 'item_reference' }] },
      'invalid_request: input: Invalid input',
    ],
    [
      'a built-in tool',
      { tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }] },
      'invalid_request: tools: the built-in tool "file_search" is not supported through Bulkhead; send function tools, and run the search or the code yourself',
    ],
    ['no input', { input: undefined }, 'invalid_request: input: is required'],
  ])('refuses %s', (_what, body, expected) => {
    expect(refusal(body)).toBe(expected);
  });
});
