import fc from 'fast-check';
import { deeplyNested, hostileJsonText, hostileWithin } from '../../../test/support/hostile-json';
import { MAX_RESPONSE_OUTPUT_ITEMS } from '../wire';
import type { ProviderTarget } from './llm-provider';
import { isProviderFailure } from './provider-errors';
import { readResponsesAnswer } from './responses-pass-through-answer';

const TARGET: ProviderTarget = { provider: 'openai', model: 'gpt-5' };
const NOW_MS = 1_767_225_600_000;

const REASONING = { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAA-opaque' };
const ANSWER = {
  id: 'resp_upstream',
  object: 'response',
  created_at: 1_767_225_000,
  model: 'gpt-5-2025-08-07',
  status: 'completed',
  incomplete_details: null,
  output: [
    REASONING,
    {
      type: 'message',
      id: 'msg_1',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Paris', annotations: [], logprobs: [] }],
    },
  ],
  usage: {
    input_tokens: 40,
    input_tokens_details: { cached_tokens: 8 },
    output_tokens: 300,
    output_tokens_details: { reasoning_tokens: 290 },
    total_tokens: 340,
  },
  reasoning: { effort: 'high', summary: null },
  text: { format: { type: 'text' }, verbosity: 'low' },
};

/** The completion read from `answer`, or undefined for the attempt's typed failure; any other throw fails. */
function readOrFail(answer: unknown) {
  try {
    return readResponsesAnswer(TARGET, answer, NOW_MS);
  } catch (error) {
    if (isProviderFailure(error)) return undefined;
    throw error;
  }
}

describe('readResponsesAnswer', () => {
  it('reads the text, and keeps the answer as it came beside it', () => {
    const completion = readResponsesAnswer(TARGET, ANSWER, NOW_MS);
    expect(completion.choices[0]).toMatchObject({ message: { content: 'Paris' }, finish_reason: 'stop' });
    expect(completion.model).toBe('gpt-5-2025-08-07');
    expect(completion.created).toBe(1_767_225_000);
    expect(completion.passThroughAnswer).toBe(ANSWER);
  });

  it('charges the reasoning tokens as output and the cached ones as part of the prompt', () => {
    expect(readResponsesAnswer(TARGET, ANSWER, NOW_MS).usage).toEqual({
      prompt_tokens: 40,
      completion_tokens: 300,
      total_tokens: 340,
      prompt_tokens_details: { cached_tokens: 8 },
      completion_tokens_details: { reasoning_tokens: 290 },
    });
  });

  it('reads function calls as tool calls, by their call ids', () => {
    const call = {
      type: 'function_call',
      id: 'fc_1',
      call_id: 'call_9',
      name: 'weather',
      arguments: '{"city":"Oslo"}',
    };
    const completion = readResponsesAnswer(TARGET, { ...ANSWER, output: [REASONING, call] }, NOW_MS);
    expect(completion.choices[0].finish_reason).toBe('tool_calls');
    expect(completion.choices[0].message.tool_calls).toEqual([
      { id: 'call_9', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
    ]);
    expect(completion.choices[0].message.content).toBeNull();
  });

  it.each([
    [{ reason: 'max_output_tokens' }, 'length'],
    [{ reason: 'content_filter' }, 'content_filter'],
  ])('reads an incomplete answer (%p) as cut', (details, finish) => {
    const completion = readResponsesAnswer(
      TARGET,
      { ...ANSWER, status: 'incomplete', incomplete_details: details },
      NOW_MS,
    );
    expect(completion.choices[0].finish_reason).toBe(finish);
  });

  it.each([
    ['no usage', { ...ANSWER, usage: undefined }],
    ['no output', { ...ANSWER, output: undefined }],
    ['a failed response', { ...ANSWER, status: 'failed' }],
    ['a built-in tool call', { ...ANSWER, output: [{ type: 'web_search_call', id: 'ws_1' }] }],
    ['an encrypted_content that is not text', { ...ANSWER, output: [{ ...REASONING, encrypted_content: 7 }] }],
    ['a chat completion', { id: 'c', choices: [{ message: { content: 'x' } }], usage: { prompt_tokens: 1 } }],
    ['too many items', { ...ANSWER, output: new Array(MAX_RESPONSE_OUTPUT_ITEMS + 1).fill(REASONING) }],
  ])('fails the attempt as malformed for %s', (_name, answer) => {
    expect(readOrFail(answer)).toBeUndefined();
  });

  it('reads any answer an upstream may send, or fails the attempt', () => {
    const shapes = [
      '{"id":"$","status":"$","output":[{"type":"message","role":"assistant","content":"$"}],"usage":{"input_tokens":"$","output_tokens":"$","output_tokens_details":"$"}}',
      '{"status":"completed","output":[{"type":"function_call","call_id":"$","name":"$","arguments":"$"},{"type":"reasoning","encrypted_content":"$","summary":"$"}],"usage":"$"}',
      '{"status":"incomplete","incomplete_details":"$","output":"$","usage":{"input_tokens":1,"output_tokens":2,"input_tokens_details":"$"}}',
    ];
    fc.assert(
      fc.property(fc.oneof(hostileJsonText, ...shapes.map(hostileWithin)), (text) => {
        const completion = readOrFail(JSON.parse(text));
        if (completion === undefined) return;
        const [choice] = completion.choices;
        expect(choice.message.content === null || typeof choice.message.content === 'string').toBe(true);
        for (const call of choice.message.tool_calls ?? []) expect(typeof call.function.arguments).toBe('string');
        // Numbers, whatever they say: the account bounds them (billedUsage).
        expect(typeof completion.usage.prompt_tokens).toBe('number');
        expect(typeof completion.usage.completion_tokens).toBe('number');
        expect(typeof completion.usage.total_tokens).toBe('number');
      }),
      { numRuns: 2000 },
    );
  });

  it('fails the attempt, without throwing past the reader, for deeply nested values', () => {
    for (const kind of ['array', 'object'] as const) {
      const nested: unknown = JSON.parse(deeplyNested(10_000, kind));
      expect(readOrFail({ ...ANSWER, output: [{ ...REASONING, summary: nested }] })).toBeUndefined();
    }
  });
});
