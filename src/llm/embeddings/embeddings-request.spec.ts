import { ResilienceError } from '../../common';
import { embeddingInputs, estimateEmbeddingTokens, parseEmbeddingsRequest } from './embeddings-request';

function refusal(body: unknown): string {
  try {
    parseEmbeddingsRequest(body);
  } catch (error) {
    expect(error).toBeInstanceOf(ResilienceError);
    expect((error as ResilienceError).kind).toBe('invalid_request');
    return (error as ResilienceError).message;
  }
  throw new Error('the request was taken');
}

describe('parseEmbeddingsRequest', () => {
  it('takes each of OpenAI’s input shapes, and fields it does not read as they are', () => {
    for (const input of ['one', ['one', 'two'], [1, 2, 3], [[1, 2], [3]]]) {
      expect(parseEmbeddingsRequest({ model: 'embed', input, extra: { kept: true } })).toEqual({
        model: 'embed',
        input,
        extra: { kept: true },
      });
    }
    expect(
      parseEmbeddingsRequest({ model: 'm', input: 'x', dimensions: 256, encoding_format: 'base64', user: 'u' }),
    ).toMatchObject({ dimensions: 256, encoding_format: 'base64', user: 'u' });
  });

  it.each([
    ['no model', { input: 'x' }],
    ['no input', { model: 'm' }],
    ['an empty list', { model: 'm', input: [] }],
    ['an empty token array in a list', { model: 'm', input: [[]] }],
    ['a list of mixed inputs', { model: 'm', input: ['a', [1]] }],
    ['a negative token', { model: 'm', input: [-1] }],
    ['a fractional token', { model: 'm', input: [1.5] }],
    ['more than 2048 inputs', { model: 'm', input: Array.from({ length: 2049 }, () => 'x') }],
    ['zero dimensions', { model: 'm', input: 'x', dimensions: 0 }],
    ['another encoding', { model: 'm', input: 'x', encoding_format: 'int8' }],
    ['not an object', 'embed this'],
  ])('refuses %s with invalid_request', (_name, body) => {
    expect(refusal(body)).toEqual(expect.any(String));
  });
});

describe('embeddingInputs and their estimate', () => {
  it('makes one input of a string or a token array, and each item of a list one', () => {
    expect(embeddingInputs({ input: 'a' })).toEqual(['a']);
    expect(embeddingInputs({ input: [1, 2] })).toEqual([[1, 2]]);
    expect(embeddingInputs({ input: ['a', 'b'] })).toEqual(['a', 'b']);
    expect(embeddingInputs({ input: [[1], [2, 3]] })).toEqual([[1], [2, 3]]);
  });

  it('bounds the tokens by the UTF-8 bytes of a text, the length of a token array, and 4 per input', () => {
    // "héllo" is 6 bytes; the emoji 4.
    expect(estimateEmbeddingTokens(['héllo', '🙂'])).toBe(6 + 4 + 4 + 4);
    expect(estimateEmbeddingTokens([[1, 2, 3]])).toBe(3 + 4);
  });
});
