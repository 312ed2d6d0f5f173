import { completionWith as completion } from '../../../test/support/llm-answers';
import { toMessagesAnswer } from './chat-to-messages-answer';

describe('a completion as a Messages answer', () => {
  it("answers a refusal as Anthropic does: stop_reason refusal, the model's words as a text block, the usage charged", () => {
    expect(toMessagesAnswer(completion({ refusal: "I can't help with that." }))).toMatchObject({
      content: [{ type: 'text', text: "I can't help with that." }],
      stop_reason: 'refusal',
      usage: { input_tokens: 12, output_tokens: 7 },
    });
  });

  it('keeps the text and the refusal of one answer as two text blocks, the text first', () => {
    const message = toMessagesAnswer(completion({ content: 'Partly: ', refusal: 'not the rest.' }));

    expect(message.content).toEqual([
      { type: 'text', text: 'Partly: ' },
      { type: 'text', text: 'not the rest.' },
    ]);
    expect(message.stop_reason).toBe('refusal');
  });

  it('says refusal over a length finish: a cut refusal is still one', () => {
    expect(toMessagesAnswer(completion({ refusal: 'No.' }, 'length')).stop_reason).toBe('refusal');
  });

  it('says tool_use when the refusal came beside tool calls, whose blocks await their results', () => {
    const message = toMessagesAnswer(
      completion(
        {
          refusal: 'Not that one.',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        'tool_calls',
      ),
    );

    expect(message.content.map((block) => block.type)).toEqual(['text', 'tool_use']);
    expect(message.stop_reason).toBe('tool_use');
  });

  it('says the finish reason when the refusal is empty or null', () => {
    expect(toMessagesAnswer(completion({ content: 'Hi.', refusal: '' })).stop_reason).toBe('end_turn');
    expect(toMessagesAnswer(completion({ content: 'Hi.', refusal: null }, 'length'))).toMatchObject({
      content: [{ type: 'text', text: 'Hi.' }],
      stop_reason: 'max_tokens',
    });
  });
});
