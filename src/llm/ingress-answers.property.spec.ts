import fc from 'fast-check';
import { hostileJsonText, hostileWithin } from '../../test/support/hostile-json';
import { toMessagesAnswer } from './messages/chat-to-messages-answer';
import { readOpenAiAnswer } from './providers/openai-answer';
import { isProviderFailure } from './providers/provider-errors';
import { ResponseIds, toResponseObject } from './responses/chat-to-responses-answer';
import { billedUsage } from './routing/billed-usage';

/**
 * What the OpenAI wire's reader accepts, the ingresses can answer with: any answer it lets
 * through converts to Anthropic's `message` and OpenAI's `response` without throwing, so a
 * model server's odd but readable answer (nulls, missing fields, broken tool arguments) costs
 * nothing, and an unreadable one is the attempt's failure before any ingress sees it.
 */
const TARGET = { provider: 'openai', model: 'gpt-test' };
const BOUNDS = { promptTokens: 100, completionTokens: 64 };
const SHAPES = [
  '{"id":"$","choices":[{"index":"$","message":{"content":"$","tool_calls":"$","refusal":"$"},"finish_reason":"$"}],"usage":{"prompt_tokens":"$","completion_tokens":"$","prompt_tokens_details":"$"}}',
  '{"id":"x","choices":[{"message":{"content":null,"tool_calls":[{"id":"$","function":{"name":"$","arguments":"$"}}]},"finish_reason":"$"}],"usage":{"prompt_tokens":1,"completion_tokens":2}}',
];

describe('the ingresses, on whatever the OpenAI reader accepts', () => {
  it('convert every accepted answer to a message and a response without throwing', () => {
    fc.assert(
      fc.property(fc.oneof(hostileJsonText, ...SHAPES.map(hostileWithin)), (text) => {
        let completion;
        try {
          completion = readOpenAiAnswer(TARGET, JSON.parse(text), 0);
        } catch (error) {
          if (isProviderFailure(error)) return;
          throw error;
        }
        // What the account charges and the ingress shows: whole counts within the hold, whatever came.
        const billed = billedUsage(completion.usage, BOUNDS).usage;
        expect(Number.isSafeInteger(billed.prompt_tokens) && billed.prompt_tokens <= BOUNDS.promptTokens).toBe(true);
        expect(billed.completion_tokens >= 0 && billed.completion_tokens <= BOUNDS.completionTokens).toBe(true);
        const message = toMessagesAnswer({ ...completion, usage: billed });
        expect(Number.isSafeInteger(message.usage.input_tokens)).toBe(true);
        const response = toResponseObject({ model: 'chat', input: 'hi' }, completion, new ResponseIds('call-1'));
        expect(Array.isArray(response.output)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });
});
