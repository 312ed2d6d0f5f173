import fc from 'fast-check';
import { deeplyNested, hostileJsonText, hostileWithin } from '../../../../test/support/hostile-json';
import { type EmbeddingsExpectation, readEmbeddingsAnswer } from './answer';

/**
 * The embeddings reader against whatever an upstream may send: each answer is read into one
 * vector per input, in order, of the format and dimensions asked, or refused; never a throw.
 */
const SHAPES = [
  '{"object":"list","data":[{"index":"$","embedding":"$"}],"usage":{"prompt_tokens":"$","total_tokens":"$"}}',
  '{"data":[{"index":0,"embedding":[0.5,"$"]},{"index":"$","embedding":"$"}],"model":"$","usage":"$"}',
  '{"data":"$","usage":{"prompt_tokens":3}}',
  '{"data":[{"embedding":"$"},{"embedding":"$"}],"usage":{"prompt_tokens":"$"}}',
];
const answerText = fc.oneof(hostileJsonText, ...SHAPES.map(hostileWithin));
const expectation = fc.record({
  inputs: fc.integer({ min: 1, max: 3 }),
  encoding: fc.constantFrom<'float' | 'base64'>('float', 'base64'),
  dimensions: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
});

function expectUsable(answer: unknown, expected: EmbeddingsExpectation): void {
  const read = readEmbeddingsAnswer(answer, expected, 'fallback');
  if (read === undefined) return;
  expect(read.data).toHaveLength(expected.inputs);
  read.data.forEach((item, at) => {
    expect(item.index).toBe(at);
    if (expected.encoding === 'float') {
      expect(Array.isArray(item.embedding)).toBe(true);
      for (const value of item.embedding as number[]) expect(typeof value).toBe('number');
    } else {
      const bytes = Buffer.from(item.embedding as string, 'base64');
      expect(bytes.toString('base64')).toBe(item.embedding);
      expect(bytes.length % 4).toBe(0);
    }
  });
  expect(new Set(read.data.map((item) => item.embedding.length)).size).toBe(1);
  expect(typeof read.model).toBe('string');
  expect(typeof read.usage.prompt_tokens).toBe('number');
  expect(typeof read.usage.total_tokens).toBe('number');
}

describe('the embeddings reader, fuzzed', () => {
  it('reads any answer into one vector per input of the format asked, or refuses it', () => {
    fc.assert(
      fc.property(answerText, expectation, (text, expected) => expectUsable(JSON.parse(text), expected)),
      { numRuns: 3000 },
    );
  });

  it('refuses a deeply nested answer without throwing', () => {
    for (const kind of ['array', 'object'] as const) {
      expect(readEmbeddingsAnswer(JSON.parse(deeplyNested(5_000, kind)), { inputs: 1, encoding: 'float' }, 'm')).toBe(
        undefined,
      );
    }
  });
});

describe('readEmbeddingsAnswer', () => {
  const floats = (data: unknown[], usage: unknown = { prompt_tokens: 4 }) => ({ data, usage });

  it('orders the vectors by their index, fills in a missing one from the position, and the total from the prompt', () => {
    const read = readEmbeddingsAnswer(
      floats([
        { index: 1, embedding: [2] },
        { index: 0, embedding: [1] },
      ]),
      { inputs: 2, encoding: 'float' },
      'target-model',
    );
    const positional = readEmbeddingsAnswer(floats([{ embedding: [1] }]), { inputs: 1, encoding: 'float' }, 'm');

    expect(read).toEqual({
      object: 'list',
      model: 'target-model',
      data: [
        { object: 'embedding', index: 0, embedding: [1] },
        { object: 'embedding', index: 1, embedding: [2] },
      ],
      usage: { prompt_tokens: 4, total_tokens: 4 },
    });
    expect(positional?.data[0].index).toBe(0);
  });

  it.each([
    ['a count other than the inputs', floats([{ index: 0, embedding: [1] }]), 2],
    [
      'an index twice',
      floats([
        { index: 0, embedding: [1] },
        { index: 0, embedding: [1] },
      ]),
      2,
    ],
    ['an index past the inputs', floats([{ index: 1, embedding: [1] }]), 1],
    ['a fractional index', floats([{ index: 0.5, embedding: [1] }]), 1],
    ['a vector with a string', floats([{ index: 0, embedding: [1, '2'] }]), 1],
    ['an empty vector', floats([{ index: 0, embedding: [] }]), 1],
    [
      'vectors of two sizes',
      floats([
        { index: 0, embedding: [1, 2] },
        { index: 1, embedding: [1] },
      ]),
      2,
    ],
    ['base64 where floats were asked', floats([{ index: 0, embedding: 'AAAAAA==' }]), 1],
    ['no usage', { data: [{ index: 0, embedding: [1] }] }, 1],
  ])('refuses %s', (_name, answer, inputs) => {
    expect(readEmbeddingsAnswer(answer, { inputs, encoding: 'float' }, 'm')).toBeUndefined();
  });

  it('takes base64 of whole float32s only, of the dimensions asked', () => {
    const two = Buffer.from(new Float32Array([0.5, 0.25]).buffer).toString('base64');
    const read = (embedding: unknown, dimensions?: number) =>
      readEmbeddingsAnswer(floats([{ index: 0, embedding }]), { inputs: 1, encoding: 'base64', dimensions }, 'm');

    expect(read(two)?.data[0].embedding).toBe(two);
    expect(read(two, 2)).toBeDefined();
    expect(read(two, 3)).toBeUndefined();
    expect(read('AAA=')).toBeUndefined(); // three bytes: not a whole float
    expect(read('not base64!!')).toBeUndefined();
    expect(read('AAAA\nAAA')).toBeUndefined();
    expect(read([0.5, 0.25])).toBeUndefined();
  });
});
