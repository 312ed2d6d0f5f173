import { LazyAbortController } from '../../common';
import { noNetwork } from '../../../test/support/provider-attempt';
import type { EmbeddingsRequest } from '../wire';
import { fakeEmbed } from './fake-embeddings';
import type { EmbeddingAttempt } from './llm-provider';

function attempt(request: Pick<EmbeddingsRequest, 'input'> & Partial<EmbeddingsRequest>): EmbeddingAttempt {
  return {
    target: { provider: 'fake', model: 'fake-embed' },
    request: { model: 'fake-embed', ...request },
    http: noNetwork,
    signal: new LazyAbortController().signal,
    timeoutMs: 1_000,
  };
}

describe('fakeEmbed', () => {
  it('gives the same input the same vector, another input another, of the dimensions asked', () => {
    const { data } = fakeEmbed(attempt({ input: ['alpha', 'beta', 'alpha'], dimensions: 40 }));

    expect(data.map((item) => item.index)).toEqual([0, 1, 2]);
    expect(data[0].embedding).toEqual(data[2].embedding);
    expect(data[0].embedding).not.toEqual(data[1].embedding);
    expect(data[0].embedding).toHaveLength(40);
    for (const value of data[0].embedding as number[]) expect(value >= -1 && value < 1).toBe(true);
  });

  it('answers base64 of the same float32s, and counts a token a 4 characters or a token id each', () => {
    const floats = fakeEmbed(attempt({ input: 'twelve chars' }));
    const base64 = fakeEmbed(attempt({ input: 'twelve chars', encoding_format: 'base64' }));
    const tokens = fakeEmbed(attempt({ input: [[1, 2, 3]] }));

    const decoded = Buffer.from(base64.data[0].embedding as string, 'base64');
    expect(Array.from(new Float32Array(decoded.buffer, decoded.byteOffset, decoded.length / 4))).toEqual(
      floats.data[0].embedding,
    );
    expect(floats.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    expect(tokens.usage.prompt_tokens).toBe(3);
    expect(floats.model).toBe('fake-embed');
  });
});
