/**
 * What the service keeps in Redis, read under its private prefix: every key (SCAN), its kind
 * (`<prefix>{<tag>}:<kind>`), its size (`MEMORY USAGE`, bytes Redis holds for it, its name
 * included) and its time to live (`PTTL`: -1 for a key that never expires). And `INFO memory`'s
 * `used_memory`, which counts everything in that Redis, other users' keys included.
 */
import type Redis from 'ioredis';
import { keysUnder } from '../../test/support/redis';
import { percentile } from '../support/stats';

/** Keys sent to Redis in one pipeline. */
const BATCH = 1_000;

export interface KindFigures {
  kind: string;
  keys: number;
  /** MEMORY USAGE of its keys, summed. */
  bytes: number;
  /** PTTL of its keys in ms, -1 counted as never: undefined when no key of the kind expires. */
  ttlMs: { median: number; min: number; max: number } | undefined;
  /** Keys of the kind with no TTL. */
  neverExpire: number;
}

export interface RedisFootprint {
  keys: number;
  bytes: number;
  kinds: KindFigures[];
}

/** `used_memory` of INFO memory, bytes. */
export async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  const match = /^used_memory:(\d+)/m.exec(info);
  if (!match) throw new Error('INFO memory has no used_memory');
  return Number(match[1]);
}

/** Every key under `prefix`, by kind: how many, their bytes, their TTLs. */
export async function footprint(redis: Redis, prefix: string): Promise<RedisFootprint> {
  const keys = await keysUnder(redis, prefix);
  const byKind = new Map<string, { keys: number; bytes: number; ttls: number[]; never: number }>();
  for (let i = 0; i < keys.length; i += BATCH) {
    const batch = keys.slice(i, i + BATCH);
    const pipeline = redis.pipeline();
    for (const key of batch) pipeline.memory('USAGE', key).pttl(key);
    const replies = (await pipeline.exec()) ?? [];
    batch.forEach((key, j) => {
      const [usageError, usage] = replies[2 * j] ?? [];
      const [ttlError, ttl] = replies[2 * j + 1] ?? [];
      // A key that expired between the SCAN and here answers null and -2.
      if (usageError || ttlError || usage === null || ttl === -2) return;
      const kind = key.slice(key.lastIndexOf('}:') + 2);
      const figures = byKind.get(kind) ?? { keys: 0, bytes: 0, ttls: [], never: 0 };
      figures.keys++;
      figures.bytes += Number(usage);
      if (Number(ttl) === -1) figures.never++;
      else figures.ttls.push(Number(ttl));
      byKind.set(kind, figures);
    });
  }
  const kinds = [...byKind].map(([kind, figures]) => ({
    kind,
    keys: figures.keys,
    bytes: figures.bytes,
    ttlMs: figures.ttls.length > 0 ? spreadOf(figures.ttls) : undefined,
    neverExpire: figures.never,
  }));
  return {
    keys: kinds.reduce((sum, kind) => sum + kind.keys, 0),
    bytes: kinds.reduce((sum, kind) => sum + kind.bytes, 0),
    kinds: kinds.sort((a, b) => b.bytes - a.bytes),
  };
}

/** Deletes every key under `prefix`, a pipeline of batches; answers how many are left after. */
export async function deleteUnder(redis: Redis, prefix: string): Promise<number> {
  const keys = await keysUnder(redis, prefix);
  for (let i = 0; i < keys.length; i += BATCH) await redis.unlink(...keys.slice(i, i + BATCH));
  return (await keysUnder(redis, prefix)).length;
}

/** Median, min and max of many values (more than a spread call's arguments may hold). */
function spreadOf(values: number[]): { median: number; min: number; max: number } {
  const sorted = values.sort((a, b) => a - b);
  return { median: percentile(sorted, 50), min: sorted[0]!, max: sorted.at(-1)! };
}
