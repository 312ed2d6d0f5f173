import { cosineSimilarity } from './embedder';
import { HashingEmbedder } from './hashing-embedder';
import { noNetwork } from '../../../../test/support/provider-attempt';

const embedder = new HashingEmbedder();
const similarity = (a: string, b: string) => cosineSimilarity(embedder.embedOne(a), embedder.embedOne(b));
const norm = (vector: Float32Array) => Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));

describe('HashingEmbedder', () => {
  it('makes vectors of its dimensions, 1024 by default', () => {
    expect(embedder.embedOne('Hello world')).toHaveLength(1024);
    expect(new HashingEmbedder(256).embedOne('Hello world')).toHaveLength(256);
  });

  it.each(['What is the capital of France?', 'a', 'the the the the', 'Ünïcödé façade – naïve café 42'])(
    'makes unit vectors (%p)',
    (text) => {
      expect(norm(embedder.embedOne(text))).toBeCloseTo(1, 5);
    },
  );

  it('gives identical texts a similarity of 1', () => {
    expect(similarity('What is the capital of France?', 'What is the capital of France?')).toBeCloseTo(1, 6);
  });

  it('ignores case, punctuation and spacing: it reads words', () => {
    expect(similarity('What is the capital of France?', '  what IS the capital of   france ')).toBeCloseTo(1, 6);
  });

  it('reads compatibility forms as their plain letters (NFKC)', () => {
    expect(similarity('ﬁnance', 'finance')).toBeCloseTo(1, 6);
  });

  it('is the same in every process and version: the hash is fixed, not seeded', () => {
    const vector = embedder.embedOne('capital of France');
    const signedSlots = [...vector.keys()].filter((index) => vector[index] !== 0).map((i) => [i, Math.sign(vector[i])]);

    // Three words and two word pairs, one slot each. A change here invalidates every stored
    // vector: bump the embedder's id with it.
    expect(signedSlots).toEqual([
      [104, -1],
      [188, -1],
      [207, -1],
      [645, 1],
      [902, 1],
    ]);
  });

  it('rates a paraphrase that shares most words high', () => {
    expect(similarity('What is the capital of France?', 'Tell me, what is the capital of France?')).toBeGreaterThan(
      0.8,
    );
    expect(similarity('How do I reset my password?', 'How can I reset my password?')).toBeGreaterThan(0.7);
  });

  it('rates one word more in a long question above 0.95', () => {
    const question =
      'How do I configure the retry policy for outbound HTTP calls so that transient failures are retried with ' +
      'exponential backoff and jitter?';

    expect(similarity(question, question.replace('and jitter', 'and some jitter'))).toBeGreaterThan(0.95);
  });

  it('rates unrelated texts low', () => {
    expect(
      Math.abs(similarity('What is the capital of France?', 'How do I bake sourdough bread at home?')),
    ).toBeLessThan(0.2);
  });

  it('keeps some word order through word pairs', () => {
    expect(similarity('dog bites man', 'man bites dog')).toBeLessThan(0.9);
  });

  it('measures words, not meaning: one changed noun is still close, which is why 0.95 is the default', () => {
    const nearMiss = similarity('What is the capital of France?', 'What is the capital of Spain?');

    expect(nearMiss).toBeGreaterThan(0.7);
    expect(nearMiss).toBeLessThan(0.95);
  });

  it('gives a text with no words an all-zero vector', () => {
    expect(embedder.embedOne('?!… —').every((value) => value === 0)).toBe(true);
  });

  it('embeds a batch in order, offline', async () => {
    const vectors = await embedder.embed(['one', 'two'], noNetwork);

    expect(vectors).toEqual([embedder.embedOne('one'), embedder.embedOne('two')]);
  });

  it('names its vector space by its dimensions', () => {
    expect(new HashingEmbedder(512).id).not.toBe(new HashingEmbedder(1024).id);
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses %p dimensions with a RangeError', (dimensions) => {
    expect(() => new HashingEmbedder(dimensions)).toThrow(RangeError);
  });
});
