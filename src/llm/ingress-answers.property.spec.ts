import fc from 'fast-check';
import { hostileJsonText, hostileWithin } from '../../test/support/hostile-json';
import { toMessagesAnswer } from './messages/chat-to-messages-answer';
import { readOpenAiAnswer } from './providers/openai-answer';
import { isProviderFailure } from './providers/provider-errors';
import { ResponseIds, toResponseObject } from './responses/chat-to-responses-answer';

/**
 * What the OpenAI wire's reader accepts, the ingresses can answer with: any answer it lets
 * through converts to Anthropic's `message` and OpenAI's `response` without throwing, so a
 * model server's odd but readable answer (nulls, missing fields, broken tool arguments) costs
 * nothing, and an unreadable one is the attempt's failure before any ingress sees it.
 */
const TARGET = { provider: 'openai', model: 'gpt-test' };
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
        const message = toMessagesAnswer(completion);
        expect(Number.isSafeInteger(message.usage.input_tokens)).toBe(true);
        const response = toResponseObject({ model: 'chat', input: 'hi' }, completion, new ResponseIds('call-1'));
        expect(Array.isArray(response.output)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });
});
