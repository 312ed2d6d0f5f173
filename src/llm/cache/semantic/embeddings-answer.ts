import { isZeroVector, normalised } from './embedder';
import { malformedEmbeddingsError } from './embedding-errors';

/**
 * The most dimensions an embedding may have. The largest served today have 4,096 (3,072 for
 * OpenAI's text-embedding-3-large); a vector of more would cost every lookup of its partition a
 * scan that long, so a server answering more is answering something else.
 */
export const MAX_EMBEDDING_DIMENSIONS = 16_384;

/**
 * An OpenAI-compatible `/embeddings` answer, read and checked before any of it is used: `data`
 * holds exactly `count` items, each with an `embedding` of finite numbers (also as float32: a
 * double past 3.4e38 would become Infinity, and the vector NaN), all of one length (`dimensions`
 * when asked, else the first one's, at most {@link MAX_EMBEDDING_DIMENSIONS}), none all zeros.
 * Items come back in the order of the texts (by `index` when every item has one). Anything else
 * is a `transient` failure of this lookup, whose message names the embedder and the reason,
 * never a value from the answer.
 */
export function embeddingsFromAnswer(
  body: Buffer,
  count: number,
  dimensions: number | undefined,
  embedder: string,
): Float32Array[] {
  const fail = (reason: string) => malformedEmbeddingsError(embedder, reason);
  let answer: unknown;
  try {
    answer = JSON.parse(body.toString('utf8'));
  } catch {
    throw fail('not JSON');
  }
  const data = isObject(answer) ? answer.data : undefined;
  if (!Array.isArray(data) || data.length !== count) throw fail(`not ${count} embedding(s)`);
  const items = inIndexOrder(data);
  if (!items) throw fail('indexes that are not 0 to n-1');
  const length = dimensions ?? embeddingOf(items[0])?.length;
  if (length !== undefined && length > MAX_EMBEDDING_DIMENSIONS) {
    throw fail(`embeddings of more than ${MAX_EMBEDDING_DIMENSIONS} dimensions`);
  }
  return items.map((item) => {
    const values = embeddingOf(item);
    if (!values || values.length === 0) throw fail('an embedding that is not a list of numbers');
    if (values.length !== length) throw fail(`an embedding of ${values.length} dimensions, not ${length}`);
    const vector = Float32Array.from(values);
    if (!vector.every(Number.isFinite)) throw fail('an embedding with numbers too large for float32');
    normalised(vector);
    if (isZeroVector(vector)) throw fail('an all-zero embedding');
    if (!vector.every(Number.isFinite)) throw fail('an embedding that cannot be normalised');
    return vector;
  });
}

/**
 * The items by their `index` when every item has one (which must then be 0 to n-1), else as
 * given; undefined for indexes that do not say where each goes. No array is indexed by a number
 * before it is known to be below `data.length`.
 */
function inIndexOrder(data: unknown[]): unknown[] | undefined {
  if (!data.every((item) => isObject(item) && Number.isSafeInteger(item.index))) return data;
  const ordered: unknown[] = new Array(data.length).fill(undefined);
  for (const item of data as Array<{ index: number }>) {
    if (item.index < 0 || item.index >= data.length || ordered[item.index] !== undefined) return undefined;
    ordered[item.index] = item;
  }
  return ordered;
}

/** An item's `embedding` when it is a list of finite numbers. */
function embeddingOf(item: unknown): number[] | undefined {
  if (!isObject(item) || !Array.isArray(item.embedding)) return undefined;
  const values = item.embedding as unknown[];
  return values.every((value) => typeof value === 'number' && Number.isFinite(value))
    ? (values as number[])
    : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
