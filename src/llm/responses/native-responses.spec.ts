import type { ChatCompletion } from '../chat.types';
import { ResponseIds } from './chat-to-responses-answer';
import { nativeResponseObject, nativeResponsesRequest } from './native-responses';
import type { ResolvedResponsesRequest } from './stored/response-references';

const REASONING = { type: 'reasoning' as const, id: 'rs_1', summary: [], encrypted_content: 'gAAAA-opaque' };
const RESOLVED: ResolvedResponsesRequest = {
  model: 'route',
  stream: false,
  store: true,
  previous_response_id: 'resp_earlier',
  reasoning: { effort: 'high' },
  include: ['reasoning.encrypted_content'],
  input: [
    { type: 'message', role: 'user', content: 'hi' },
    REASONING,
    { type: 'message', id: 'msg_bulkhead_0', role: 'assistant', content: 'hello' },
    { type: 'function_call', id: 'fc_bulkhead_0', call_id: 'call_1', name: 'f', arguments: '{}' },
  ],
};

describe('nativeResponsesRequest', () => {
  it("carries the resolved body without what is Bulkhead's or set per attempt", () => {
    const { format, body } = nativeResponsesRequest(RESOLVED);
    expect(format).toBe('openai-responses');
    expect(Object.keys(body).sort()).toEqual(['include', 'input', 'reasoning']);
  });

  it('keeps a reasoning item whole, its id included, and sends other items without theirs', () => {
    const input = nativeResponsesRequest(RESOLVED).body.input as Array<Record<string, unknown>>;
    expect(input[1]).toEqual(REASONING);
    expect(input[2]).toEqual({ type: 'message', role: 'assistant', content: 'hello' });
    expect(input[3]).toEqual({ type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' });
  });

  it("holds earlier reasoning's bytes as input the chat estimate does not see", () => {
    expect(nativeResponsesRequest(RESOLVED).extraInputTokens).toBe(JSON.stringify(REASONING).length);
    expect(nativeResponsesRequest({ ...RESOLVED, input: 'hi' }).extraInputTokens).toBe(0);
  });
});

describe('nativeResponseObject', () => {
  const answer = {
    id: 'resp_upstream',
    object: 'response',
    status: 'completed',
    store: false,
    previous_response_id: null,
    output: [
      REASONING,
      { type: 'message', id: 'msg_up', role: 'assistant', content: [{ type: 'output_text', text: 'a' }] },
      { type: 'function_call', id: 'fc_up_a', call_id: 'call_a', name: 'f', arguments: '{}' },
      { type: 'function_call', id: 'fc_up_b', call_id: 'call_b', name: 'f', arguments: '{}' },
    ],
    usage: { input_tokens: 9_999, output_tokens: 9_999, service_tier_note: 'kept' },
  };
  const completion = {
    usage: {
      prompt_tokens: 10,
      completion_tokens: 20,
      total_tokens: 30,
      completion_tokens_details: { reasoning_tokens: 15 },
    },
  } as unknown as ChatCompletion;

  it("names the response and its messages and calls as the translated path does, the reasoning by the target's id", () => {
    const ids = new ResponseIds('call-1');
    const body = nativeResponseObject(RESOLVED, answer, completion.usage, ids);
    expect(body.id).toBe(ids.response);
    expect(body.output.map((item) => (item as { id: string }).id)).toEqual([
      'rs_1',
      ids.message(0),
      ids.functionCall(0),
      ids.functionCall(1),
    ]);
    expect(body).toMatchObject({ store: true, previous_response_id: 'resp_earlier' });
  });

  it('shows the counts charged, the rest of the usage as given', () => {
    const body = nativeResponseObject(RESOLVED, answer, completion.usage, new ResponseIds('call-1'));
    expect(body.usage).toEqual({
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 20,
      output_tokens_details: { reasoning_tokens: 15 },
      total_tokens: 30,
      service_tier_note: 'kept',
    });
  });
});
