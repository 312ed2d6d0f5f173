import type { ChatChunk, ChatChunkChoice, ChatDelta, ChatUsage, FinishReason } from '../chat.types';
import { carriesContent, StreamAssembly } from './stream-assembly';

const BASE = { id: 'chatcmpl-1', object: 'chat.completion.chunk' as const, created: 1_767_225_600, model: 'gpt-4o' };

function chunk(choices: ChatChunkChoice[], extra: Partial<ChatChunk> = {}): ChatChunk {
  return { ...BASE, choices, ...extra };
}

function delta(value: ChatDelta, index = 0, finish: FinishReason | null = null): ChatChunk {
  return chunk([{ index, delta: value, finish_reason: finish, logprobs: null }]);
}

const USAGE: ChatUsage = {
  prompt_tokens: 42,
  completion_tokens: 7,
  total_tokens: 49,
  prompt_tokens_details: { cached_tokens: 32 },
};

function assembled(...chunks: ChatChunk[]): StreamAssembly {
  const assembly = new StreamAssembly();
  for (const each of chunks) assembly.add(each);
  return assembly;
}

describe('StreamAssembly', () => {
  describe('the answer', () => {
    it('joins the text of each choice in order, choices in index order whatever order they came in', () => {
      const assembly = assembled(
        delta({ role: 'assistant', content: '' }, 1),
        delta({ role: 'assistant', content: '' }, 0),
        delta({ content: 'Second ' }, 1),
        delta({ content: 'First ' }, 0),
        delta({ content: 'answer' }, 0),
        delta({ content: 'one' }, 1),
        delta({}, 1, 'length'),
        delta({}, 0, 'stop'),
      );

      const { choices } = assembly.completion(10);

      expect(choices.map(({ index, message, finish_reason }) => [index, message.content, finish_reason])).toEqual([
        [0, 'First answer', 'stop'],
        [1, 'Second one', 'length'],
      ]);
    });

    it('takes the id, model and created of the first chunk', () => {
      const assembly = assembled(
        delta({ content: 'a' }),
        chunk([{ index: 0, delta: { content: 'b' }, finish_reason: null, logprobs: null }], {
          id: 'other',
          model: 'other-model',
          created: 1,
        }),
      );

      expect(assembly.completion(0)).toMatchObject({ id: 'chatcmpl-1', model: 'gpt-4o', created: 1_767_225_600 });
    });

    it('builds each tool call from its pieces by index: id and name first, arguments appended', () => {
      const assembly = assembled(
        delta({ role: 'assistant', content: null }),
        delta({
          tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'weather', arguments: '' } }],
        }),
        delta({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
        delta({
          tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'time', arguments: '{}' } }],
        }),
        delta({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
        delta({}, 0, 'tool_calls'),
      );

      const [choice] = assembly.completion(0).choices;

      expect(choice).toEqual({
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_b', type: 'function', function: { name: 'time', arguments: '{}' } },
          ],
        },
        finish_reason: 'tool_calls',
        logprobs: null,
      });
    });

    it('keeps the text beside tool calls when both came', () => {
      const assembly = assembled(
        delta({ content: 'Let me check.' }),
        delta({ tool_calls: [{ index: 0, id: 'call_a', function: { name: 'weather', arguments: '{}' } }] }),
      );

      const { message } = assembly.completion(0).choices[0];

      expect(message.content).toBe('Let me check.');
      expect(message.tool_calls).toHaveLength(1);
    });

    it('joins a refusal from its pieces', () => {
      const assembly = assembled(
        delta({ role: 'assistant', content: null, refusal: null }),
        delta({ refusal: "I can't " }),
        delta({ refusal: 'help with that.' }),
        delta({}, 0, 'stop'),
      );

      const { message } = assembly.completion(0).choices[0];

      expect(message).toEqual({ role: 'assistant', content: '', refusal: "I can't help with that." });
    });

    it("finishes a choice with 'stop' when no finish reason came, and keeps the last one that did", () => {
      const assembly = assembled(
        delta({ content: 'cut short' }, 0),
        delta({ content: 'x' }, 1),
        delta({}, 1, 'length'),
        delta({}, 1, null),
      );

      expect(assembly.completion(0).choices.map((choice) => choice.finish_reason)).toEqual(['stop', 'length']);
    });

    it('answers a whole chat.completion with no tool_calls field where none came', () => {
      const assembly = assembled(
        delta({ role: 'assistant', content: '' }),
        delta({ content: 'Hi.' }),
        delta({}, 0, 'stop'),
      );
      assembly.add(chunk([], { usage: USAGE }));

      expect(assembly.completion(0)).toEqual({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1_767_225_600,
        model: 'gpt-4o',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: 'Hi.', refusal: null },
            finish_reason: 'stop',
            logprobs: null,
          },
        ],
        usage: USAGE,
      });
    });
  });

  describe('its bounds', () => {
    it('refuses a chunk that takes the answer past its characters, text, refusals and tool calls alike', () => {
      const assembly = new StreamAssembly(10);
      assembly.add(delta({ content: 'hello' }));
      assembly.add(delta({ tool_calls: [{ index: 0, function: { name: 'f', arguments: '{}' } }] }));
      assembly.add(delta({ refusal: 'no' }));

      expect(() => assembly.add(delta({ content: 'x' }))).toThrow(RangeError);
    });

    it('refuses a choice or a tool call numbered past what any answer has', () => {
      expect(() => assembled(delta({ content: 'x' }, 128))).toThrow(RangeError);
      expect(() => assembled(delta({ tool_calls: [{ index: 1024, id: 'c' }] }))).toThrow(RangeError);
    });
  });

  describe('usage', () => {
    it('answers the usage the provider reported, whatever the estimate', () => {
      const assembly = assembled(delta({ content: 'a long answer of many characters' }), chunk([], { usage: USAGE }));

      expect(assembly.usageReported).toBe(true);
      expect(assembly.usage(1_000)).toBe(USAGE);
      expect(assembly.completion(1_000).usage).toBe(USAGE);
    });

    it('ignores a null usage on the chunks before the usage chunk', () => {
      const assembly = assembled(
        chunk([{ index: 0, delta: { content: 'abcd' }, finish_reason: null, logprobs: null }], { usage: null }),
      );

      expect(assembly.usageReported).toBe(false);
      expect(assembly.usage(5).completion_tokens).toBe(1);
    });

    it('counts one token per four characters when none was reported, the prompt at the estimate given', () => {
      // 2 content chunks, 21 characters: ceil(21 / 4) = 6 is more than 2.
      const assembly = assembled(
        delta({ content: 'Hello there, ' }),
        delta({ content: 'friends.' }),
        delta({ content: '' }),
      );

      expect(assembly.usageReported).toBe(false);
      expect(assembly.usage(120)).toEqual({ prompt_tokens: 120, completion_tokens: 6, total_tokens: 126 });
    });

    it('counts at least one token per content chunk when the chunks are short', () => {
      const assembly = assembled(...['a', 'b', 'c', 'd', 'e'].map((piece) => delta({ content: piece })));

      // ceil(5 / 4) = 2, but 5 chunks came: each is at least a token.
      expect(assembly.usage(0)).toEqual({ prompt_tokens: 0, completion_tokens: 5, total_tokens: 5 });
    });

    it('counts the text of every choice, and no token for a chunk without content', () => {
      const assembly = assembled(
        delta({ role: 'assistant', content: '' }, 0),
        delta({ role: 'assistant', content: '' }, 1),
        delta({ content: 'abcdefgh' }, 0),
        delta({ content: 'ijklmnop' }, 1),
        delta({}, 0, 'stop'),
      );

      expect(assembly.usage(3).completion_tokens).toBe(4);
    });

    it('counts tool call names and arguments, and each piece as a content chunk', () => {
      const assembly = assembled(
        delta({ tool_calls: [{ index: 0, id: 'call_a', function: { name: 'weather', arguments: '' } }] }),
        delta({ tool_calls: [{ index: 0, function: { arguments: '{"city":"Paris"}' } }] }),
      );

      // 'weather' + '{"city":"Paris"}' is 23 characters: ceil(23 / 4) = 6.
      expect(assembly.usage(0).completion_tokens).toBe(6);

      const pieces = assembled(
        ...['{', '"', 'a', '"', ':', '1', '}'].map((piece) =>
          delta({ tool_calls: [{ index: 0, function: { arguments: piece } }] }),
        ),
      );
      expect(pieces.usage(0).completion_tokens).toBe(7);
    });

    it('counts refusal characters, and each refusal piece as a content chunk', () => {
      const assembly = assembled(delta({ refusal: 'No' }), delta({ refusal: '.' }), delta({ refusal: '!' }));

      // 4 characters would be 1 token; 3 chunks of the answer came.
      expect(assembly.usage(0).completion_tokens).toBe(3);
    });
  });
});

describe('carriesContent', () => {
  it.each([
    ['text', { content: 'x' }, true],
    ['a tool call', { tool_calls: [{ index: 0, function: { arguments: '' } }] }, true],
    ['a refusal', { refusal: 'no' }, true],
    ['only the role', { role: 'assistant' as const }, false],
    ['empty text', { role: 'assistant' as const, content: '' }, false],
    ['null text', { content: null }, false],
    ['no tool calls', { tool_calls: [] }, false],
    ['an empty refusal', { refusal: '' }, false],
    ['a null refusal', { refusal: null }, false],
    ['nothing', {}, false],
  ] as Array<[string, ChatDelta, boolean]>)(
    'says whether a delta with %s carries content: %s',
    (_name, value, expected) => {
      expect(carriesContent(delta(value))).toBe(expected);
    },
  );

  it('reads every choice: content in a later one counts', () => {
    expect(
      carriesContent(
        chunk([
          { index: 0, delta: {}, finish_reason: 'stop', logprobs: null },
          { index: 1, delta: { content: 'late' }, finish_reason: null, logprobs: null },
        ]),
      ),
    ).toBe(true);
  });

  it('finds none in the usage chunk', () => {
    expect(carriesContent(chunk([], { usage: USAGE }))).toBe(false);
  });
});
