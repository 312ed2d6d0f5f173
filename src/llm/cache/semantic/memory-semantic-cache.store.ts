import type { Clock } from '../../../common';
import type { CacheableCompletion } from '../cacheable';
import { RecencyList } from '../recency-list';
import { assertTtl } from '../llm-cache.store';
import { cosineSimilarity } from './embedder';
import type { SemanticCacheStore, SemanticCacheUsage, SemanticMatch } from './semantic-cache.store';

/** The bounds of a {@link MemorySemanticCacheStore}; 0 in `maxEntries` or `maxBytes` stores nothing. */
export interface MemorySemanticCacheStoreOptions {
  /** Entries held at most, across every partition. */
  maxEntries: number;
  /** Entries one partition holds at most: the most one lookup compares. */
  maxEntriesPerPartition: number;
  /** Bytes held at most: answers' JSON in UTF-8 plus 4 bytes per vector dimension. */
  maxBytes: number;
}

interface Partition {
  readonly id: string;
  /** Its entries by question id, in recency order: the first is the next to evict. */
  readonly entries: Map<string, Entry>;
}

interface Entry {
  readonly partition: Partition;
  readonly questionId: string;
  readonly vector: Float32Array;
  /** The answer as stored: parsed afresh by every hit, so no caller holds the store's copy. */
  readonly json: string;
  readonly bytes: number;
  /** Monotonic ms of the clock; the entry is gone from this moment on. */
  readonly expiresAt: number;
  /** Neighbours in recency order across every partition: `older` towards the next to evict. */
  older: Entry | undefined;
  newer: Entry | undefined;
}

/**
 * The embedded semantic cache: partitions (a Map each, in recency order) and one doubly linked
 * list of every entry in recency order. A lookup compares the query with every entry of its
 * partition (brute force: at most `maxEntriesPerPartition` dot products, about a millisecond
 * for 1000 entries of 1024 dimensions); a hit moves its entry to the newest end of both orders.
 * Over a bound, the least recently used entry goes: the partition's own when the partition is
 * full, else the oldest of all (expired or not) until `maxEntries` and `maxBytes` hold.
 *
 * Time is the injected clock's: an entry is never answered at or past its expiry; expired
 * entries are dropped when their partition is scanned, or evicted with the rest. Each replica
 * has its own (a shared store would implement {@link SemanticCacheStore} on Redis).
 */
export class MemorySemanticCacheStore implements SemanticCacheStore {
  readonly maxEntries: number;
  readonly maxEntriesPerPartition: number;
  readonly maxBytes: number;
  private readonly partitions = new Map<string, Partition>();
  private entryCount = 0;
  private heldBytes = 0;
  private readonly recency = new RecencyList<Entry>();

  constructor(
    private readonly clock: Clock,
    options: MemorySemanticCacheStoreOptions,
  ) {
    for (const bound of ['maxEntries', 'maxBytes'] as const) {
      if (!(Number.isSafeInteger(options[bound]) && options[bound] >= 0)) {
        throw new RangeError(`${bound} must be an integer of at least 0`);
      }
    }
    if (!(Number.isSafeInteger(options.maxEntriesPerPartition) && options.maxEntriesPerPartition >= 1)) {
      throw new RangeError('maxEntriesPerPartition must be an integer of at least 1');
    }
    this.maxEntries = options.maxEntries;
    this.maxEntriesPerPartition = options.maxEntriesPerPartition;
    this.maxBytes = options.maxBytes;
  }

  nearest(partitionId: string, vector: Float32Array, minSimilarity: number): SemanticMatch | null {
    const partition = this.partitions.get(partitionId);
    if (!partition) return null;
    const now = this.clock.now();
    let best: Entry | undefined;
    let bestSimilarity = -Infinity;
    for (const entry of partition.entries.values()) {
      if (entry.expiresAt <= now) {
        this.remove(entry);
        continue;
      }
      const similarity = cosineSimilarity(vector, entry.vector);
      // Ties go to the later entry (the more recently used): the Map is oldest first.
      if (similarity >= bestSimilarity) {
        best = entry;
        bestSimilarity = similarity;
      }
    }
    if (!best || bestSimilarity < minSimilarity) return null;
    this.touch(best);
    return { completion: JSON.parse(best.json) as CacheableCompletion, similarity: bestSimilarity };
  }

  add(
    partitionId: string,
    questionId: string,
    vector: Float32Array,
    completion: CacheableCompletion,
    ttlMs: number,
  ): void {
    assertTtl(ttlMs);
    const previous = this.partitions.get(partitionId)?.entries.get(questionId);
    if (previous) this.remove(previous);
    if (ttlMs === 0 || this.maxEntries === 0) return;
    const json = JSON.stringify(completion);
    const bytes = Buffer.byteLength(json, 'utf8') + vector.length * Float32Array.BYTES_PER_ELEMENT;
    if (bytes > this.maxBytes) return;
    let partition = this.partitions.get(partitionId);
    if (!partition) {
      partition = { id: partitionId, entries: new Map() };
      this.partitions.set(partitionId, partition);
    }
    const entry: Entry = {
      partition,
      questionId,
      vector: vector.slice(),
      json,
      bytes,
      expiresAt: this.clock.now() + ttlMs,
      older: undefined,
      newer: undefined,
    };
    partition.entries.set(questionId, entry);
    this.recency.append(entry);
    this.entryCount++;
    this.heldBytes += bytes;
    if (partition.entries.size > this.maxEntriesPerPartition) this.remove(partition.entries.values().next().value!);
    while (this.entryCount > this.maxEntries || this.heldBytes > this.maxBytes) this.remove(this.recency.oldest!);
  }

  usage(): SemanticCacheUsage {
    return { entries: this.entryCount, partitions: this.partitions.size, bytes: this.heldBytes };
  }

  /** Moves an entry to the newest end of its partition and of the whole store. */
  private touch(entry: Entry): void {
    const { entries } = entry.partition;
    entries.delete(entry.questionId);
    entries.set(entry.questionId, entry);
    this.recency.touch(entry);
  }

  private remove(entry: Entry): void {
    const { partition } = entry;
    partition.entries.delete(entry.questionId);
    if (partition.entries.size === 0) this.partitions.delete(partition.id);
    this.entryCount--;
    this.heldBytes -= entry.bytes;
    this.recency.unlink(entry);
  }
}
