import type { ChatCompletion } from '../chat.types';
import { completionChunks, textPieces } from './completion-chunks';
import { StreamAssembly } from './stream-assembly';

const TEXT =
  'Streams are sent in pieces of about sixty-four characters, cut between words where a space is near the end, ' +
  'so that a client reading them sees whole words arrive.';

function completion(overrides: Partial<ChatCompletion> = {}): ChatCompletion {
  return {
    id: 'chatcmpl-42',
    object: 'chat.completion',
    created: 1_767_225_600,
    model: 'gpt-4o-2024-08-06',
    choices: [
      { index: 0, message: { role: 'assistant', content: TEXT, refusal: null }, finish_reason: 'stop', logprobs: null },
    ],
    usage: { prompt_tokens: 31, completion_tokens: 29, total_tokens: 60, prompt_tokens_details: { cached_tokens: 0 } },
    ...overrides,
  };
}

/** The completion the chunks add up to, as a stream's reader assembles it. */
function reassembled(answer: ChatCompletion, pieceChars?: number): ChatCompletion {
  const assembly = new StreamAssembly();
  for (const chunk of completionChunks(answer, pieceChars)) assembly.add(chunk);
  return assembly.completion(0);
}

const HIGH_SURROGATE = /[\ud800-\udbff]$/;

describe('completionChunks', () => {
  it('adds up to the same completion: text, finish and usage', () => {
    const answer = completion();

    expect(reassembled(answer)).toEqual(answer);
    expect(reassembled(answer, 7)).toEqual(answer);
  });

  it('adds up to the same completion with tool calls and no text', () => {
    const answer = completion({
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            refusal: null,
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
              { id: 'call_2', type: 'function', function: { name: 'time', arguments: '{"tz":"CET"}' } },
            ],
          },
          finish_reason: 'tool_calls',
          logprobs: null,
        },
      ],
    });

    expect(reassembled(answer)).toEqual(answer);
  });

  it('adds up to the same completion with several choices, each with its own finish', () => {
    const answer = completion({
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'One.', refusal: null },
          finish_reason: 'stop',
          logprobs: null,
        },
        {
          index: 1,
          message: { role: 'assistant', content: TEXT.slice(0, 90), refusal: null },
          finish_reason: 'length',
          logprobs: null,
        },
      ],
    });

    expect(reassembled(answer)).toEqual(answer);
  });

  it('streams a refusal, so a replayed refusal is not an empty answer', () => {
    const answer = completion({
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: null, refusal: "I'm sorry, I can't help with that." },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
    });

    expect(reassembled(answer).choices[0].message.refusal).toBe("I'm sorry, I can't help with that.");
  });

  it('sends the role first, then the text pieces, the finish, and the usage alone last', () => {
    const chunks = completionChunks(completion({ choices: [{ ...completion().choices[0], finish_reason: 'length' }] }));

    for (const chunk of chunks) {
      expect(chunk).toMatchObject({
        id: 'chatcmpl-42',
        object: 'chat.completion.chunk',
        created: 1_767_225_600,
        model: 'gpt-4o-2024-08-06',
      });
    }
    expect(chunks[0].choices).toEqual([
      { index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null, logprobs: null },
    ]);
    const pieces = chunks.slice(1, -2).map((chunk) => chunk.choices[0].delta.content);
    expect(pieces).toEqual(textPieces(TEXT, 64));
    expect(pieces.length).toBeGreaterThan(1);
    expect(chunks.at(-2)?.choices).toEqual([{ index: 0, delta: {}, finish_reason: 'length', logprobs: null }]);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: completion().usage });
    // Only the last chunk has a usage field at all.
    expect(chunks.slice(0, -1).every((chunk) => !('usage' in chunk))).toBe(true);
  });

  it('sends no content chunk for empty or null content', () => {
    for (const content of ['', null]) {
      const chunks = completionChunks(
        completion({
          choices: [
            { index: 0, message: { role: 'assistant', content, refusal: null }, finish_reason: 'stop', logprobs: null },
          ],
        }),
      );

      expect(chunks.map((chunk) => chunk.choices[0]?.delta)).toEqual([
        { role: 'assistant', content: '' },
        {},
        undefined,
      ]);
    }
  });
});

describe('textPieces', () => {
  it('answers no piece for empty text, and one for text within the size', () => {
    expect(textPieces('', 16)).toEqual([]);
    expect(textPieces('short', 16)).toEqual(['short']);
    expect(textPieces('x'.repeat(16), 16)).toEqual(['x'.repeat(16)]);
  });

  it('cuts text without spaces at exactly the size', () => {
    expect(textPieces('x'.repeat(40), 16)).toEqual(['x'.repeat(16), 'x'.repeat(16), 'x'.repeat(8)]);
  });

  it('ends a piece after a space in its last quarter', () => {
    // Size 16: a space at offset 12 is in the last quarter (12..15).
    expect(textPieces(`${'a'.repeat(12)} ${'b'.repeat(16)}`, 16)).toEqual([`${'a'.repeat(12)} `, 'b'.repeat(16)]);
    expect(textPieces(`${'a'.repeat(15)} ${'b'.repeat(4)}`, 16)).toEqual([`${'a'.repeat(15)} `, 'b'.repeat(4)]);
  });

  it('cuts at the size when the last space is before the last quarter', () => {
    // Offset 11 is before 12: a piece of 12 characters would be too short.
    expect(textPieces(`${'a'.repeat(11)} ${'b'.repeat(10)}`, 16)).toEqual([`${'a'.repeat(11)} bbbb`, 'b'.repeat(6)]);
  });

  it('takes the last space in the window when there are several', () => {
    expect(textPieces('aaaaaaaaaaaa b c d', 16)).toEqual(['aaaaaaaaaaaa b ', 'c d']);
  });

  it('gives back the whole text, each piece within the size and no shorter than three quarters of it but the last', () => {
    for (const size of [4, 7, 16, 64]) {
      const pieces = textPieces(TEXT, size);

      expect(pieces.join('')).toBe(TEXT);
      for (const piece of pieces.slice(0, -1)) {
        expect(piece.length).toBeLessThanOrEqual(size);
        expect(piece.length).toBeGreaterThan(Math.floor((size * 3) / 4));
      }
    }
  });

  it('never cuts between the two halves of a character outside the BMP', () => {
    const text = `${'a'.repeat(15)}😀b${'c'.repeat(14)}🎉🎉`;

    const pieces = textPieces(text, 16);

    expect(pieces.join('')).toBe(text);
    expect(pieces[0]).toBe(`${'a'.repeat(15)}😀`);
    for (const piece of pieces) {
      expect(piece).not.toMatch(HIGH_SURROGATE);
      expect(piece.length).toBeLessThanOrEqual(17);
    }
  });
});
