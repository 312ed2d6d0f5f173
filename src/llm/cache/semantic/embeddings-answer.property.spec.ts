import fc from 'fast-check';
import { isResilienceError } from '../../../common';
import { embeddingsFromAnswer, MAX_EMBEDDING_DIMENSIONS } from './embeddings-answer';

const EMBEDDER = 'openai/test';

const answerOf = (value: unknown) => Buffer.from(JSON.stringify(value));
const read = (value: unknown, count = 1, dimensions?: number) =>
  embeddingsFromAnswer(answerOf(value), count, dimensions, EMBEDDER);

/** The failure `read` throws, or undefined when it answers. */
function failureOf(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('embeddingsFromAnswer', () => {
  it('answers unit vectors in the order of their indexes', () => {
    const [first, second] = read(
      {
        data: [
          { index: 1, embedding: [0, 2] },
          { index: 0, embedding: [3, 4] },
        ],
      },
      2,
    );
    expect(Array.from(first)).toEqual([expect.closeTo(0.6), expect.closeTo(0.8)]);
    expect(Array.from(second)).toEqual([0, 1]);
  });

  it.each<[string, unknown, number?]>([
    ['numbers past float32 (1e39 would be Infinity, then NaN)', { data: [{ embedding: [1e39, 1] }] }],
    ['numbers past float32 in every place', { data: [{ embedding: [1e300, -1e300] }] }],
    ['more dimensions than any model has', { data: [{ embedding: new Array(MAX_EMBEDDING_DIMENSIONS + 1).fill(1) }] }],
    ['an index far past the list', { data: [{ index: 300_000_000, embedding: [1] }] }],
    ['a negative index', { data: [{ index: -1, embedding: [1] }] }],
    [
      'two items at one index',
      {
        data: [
          { index: 0, embedding: [1] },
          { index: 0, embedding: [1] },
        ],
      },
      2,
    ],
    ['an embedding of strings', { data: [{ embedding: ['1', '2'] }] }],
    ['an embedding of the wrong length', { data: [{ embedding: [1, 2, 3] }] }, 1],
    ['an all-zero embedding', { data: [{ embedding: [0, 0] }] }],
    ['no data', { object: 'list' }],
    ['data that is not a list', { data: { embedding: [1] } }],
    ['fewer items than texts', { data: [{ embedding: [1] }] }, 2],
  ])('refuses an answer with %s as a transient failure of the lookup', (_label, answer, count = 1) => {
    const dimensions = _label.includes('wrong length') ? 2 : undefined;
    expect(failureOf(() => read(answer, count, dimensions))).toMatchObject({
      kind: 'transient',
      message: expect.stringContaining(`embedder ${EMBEDDER} answered with no usable embeddings`),
    });
  });

  it('refuses a body that is not JSON', () => {
    expect(failureOf(() => embeddingsFromAnswer(Buffer.from('<html>'), 1, undefined, EMBEDDER))).toMatchObject({
      kind: 'transient',
    });
  });

  it('answers finite unit vectors of one length, or a transient failure, whatever the answer (property)', () => {
    const number = fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.constantFrom(0, 1, -1, 1e39, -1e39, 3.4e38, 1e-46, Number.MAX_VALUE, Number.MIN_VALUE),
    );
    const item = fc.record(
      {
        index: fc.oneof(fc.integer({ min: -2, max: 4 }), fc.constantFrom(3e8, 0.5, '0', null)),
        embedding: fc.oneof(fc.array(number, { maxLength: 6 }), fc.jsonValue()),
        __proto__: fc.jsonValue(),
        constructor: fc.jsonValue(),
      },
      { requiredKeys: [] },
    );
    const answer = fc.oneof(
      fc.record({ data: fc.oneof(fc.array(item, { maxLength: 4 }), fc.jsonValue()) }, { requiredKeys: [] }),
      fc.jsonValue(),
    );
    fc.assert(
      fc.property(
        answer,
        fc.integer({ min: 1, max: 3 }),
        fc.option(fc.integer({ min: 1, max: 6 })),
        (value, count, dimensions) => {
          let vectors: Float32Array[];
          try {
            vectors = read(value, count, dimensions ?? undefined);
          } catch (error) {
            expect(isResilienceError(error) && error.kind === 'transient').toBe(true);
            return;
          }
          expect(vectors).toHaveLength(count);
          for (const vector of vectors) {
            expect(vector.length).toBe(vectors[0].length);
            if (dimensions !== null) expect(vector.length).toBe(dimensions);
            expect(vector.every(Number.isFinite)).toBe(true);
            const norm = Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0));
            expect(norm).toBeCloseTo(1, 3);
          }
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
