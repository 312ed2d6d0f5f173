import { completionWith as completion } from '../../../test/support/llm-answers';
import type { ChatCompletion } from '../chat.types';
import { ResponseIds, toResponseObject } from './chat-to-responses-answer';

const REQUEST = { model: 'chat', input: 'hi' };

const responseOf = (answer: ChatCompletion) => toResponseObject(REQUEST, answer, new ResponseIds('call-1'));

describe('a completion as a Responses answer', () => {
  it("answers a refusal as a message whose one part is the refusal, OpenAI's shape, with the usage charged", () => {
    const response = responseOf(completion({ refusal: "I can't help with that." }));

    expect(response).toMatchObject({
      status: 'completed',
      output: [
        {
          type: 'message',
          id: expect.stringMatching(/^msg_call-1_[A-Za-z0-9_-]{22}_0$/),
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'refusal', refusal: "I can't help with that." }],
        },
      ],
      usage: { input_tokens: 12, output_tokens: 7, total_tokens: 19 },
    });
  });

  it('keeps the text and the refusal of one answer as two parts: the text first, as its stream replays them', () => {
    const response = responseOf(completion({ content: 'Partly: ', refusal: 'not the rest.' }));

    expect(response.output).toHaveLength(1);
    expect(response.output[0]).toMatchObject({
      content: [
        { type: 'output_text', text: 'Partly: ', annotations: [] },
        { type: 'refusal', refusal: 'not the rest.' },
      ],
    });
  });

  it('puts the refusal before the function calls, in the message item', () => {
    const response = responseOf(
      completion(
        {
          refusal: 'Not that one.',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        'tool_calls',
      ),
    );

    expect(response.output.map((item) => item.type)).toEqual(['message', 'function_call']);
  });

  it('has no message item for an answer with neither text nor refusal (an empty or null refusal included)', () => {
    expect(responseOf(completion({ content: '', refusal: '' })).output).toEqual([]);
    expect(responseOf(completion({ content: null, refusal: null })).output).toEqual([]);
  });
});

describe('ResponseIds: ids a kept response can be named by', () => {
  it('draws 128 random bits per response, so no caller can name another call by its X-Call-Id', () => {
    const first = new ResponseIds('call-1');
    const second = new ResponseIds('call-1');
    expect(first.response).toMatch(/^resp_call-1_[A-Za-z0-9_-]{22}$/);
    expect(second.response).not.toBe(first.response);
    expect(second.message(0)).not.toBe(first.message(0));
  });

  it("names function calls by their place, never by the target's tool-call id (local models repeat call_0)", () => {
    const ids = new ResponseIds('call-1');
    const tool = (id: string) => ({ id, type: 'function' as const, function: { name: 'f', arguments: '{}' } });
    const answer = completion({ content: null, tool_calls: [tool('call_0'), tool('call_0')] });
    const output = toResponseObject(REQUEST, answer, ids).output;
    expect(output.map((item) => item.id)).toEqual([ids.functionCall(0), ids.functionCall(1)]);
    expect(new Set(output.map((item) => item.id)).size).toBe(2);
  });
});
