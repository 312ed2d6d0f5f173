import type Redis from 'ioredis';
import type { RedisKeys } from '../store/redis-keys';
import { RedisScript } from '../store/redis-script';
import { batchWritesThisTick } from '../store/redis-connection';
import {
  CONTAINMENT_POSTURES,
  CONTAINMENT_STATES,
  type ContainmentChange,
  type ContainmentPosture,
  type ContainmentSnapshot,
  type ContainmentState,
} from './containment-snapshot';
import type { ContainmentStore } from './containment.store';

/** The hash fields of a snapshot, in the order the scripts answer them. */
const FIELDS = ['tenant', 'state', 'posture', 'reason', 'version', 'updatedAt'] as const;

/** ARGV: tenant, state, posture, reason, updatedAt. Answers the snapshot's fields. */
const WRITE = `local version = redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('HSET', KEYS[1], 'tenant', ARGV[1], 'state', ARGV[2], 'posture', ARGV[3], 'reason', ARGV[4], 'updatedAt', ARGV[5])
return redis.call('HMGET', KEYS[1], ${FIELDS.map((field) => `'${field}'`).join(', ')})`;

/** ARGV: as {@link WRITE}. Writes version 1 only where no snapshot exists; answers the current fields. */
const SEED = `if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'tenant', ARGV[1], 'state', ARGV[2], 'posture', ARGV[3], 'reason', ARGV[4], 'version', 1, 'updatedAt', ARGV[5])
end
return redis.call('HMGET', KEYS[1], ${FIELDS.map((field) => `'${field}'`).join(', ')})`;

/**
 * Containment snapshots in Redis, one hash per tenant (`<prefix>{<tenant>}:containment`), so a
 * change written through one replica routes on every replica from its next read. The version
 * grows inside the write script, so concurrent writes from any replica get distinct versions.
 *
 * These keys have no TTL, the one exception to "every Redis key has a TTL": a snapshot that
 * expired would route its tenant as `no_snapshot` (isolated) — or, worse, lose an operator's
 * `active` containment until a seed rewrote it as `not_contained`. Their number is bounded by
 * the configured tenants (seeded at start) plus the tenants an operator wrote through the admin
 * route, one small hash each.
 */
export class RedisContainmentStore implements ContainmentStore {
  private readonly writeScript: RedisScript;
  private readonly seedScript: RedisScript;

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {
    this.writeScript = new RedisScript(redis, WRITE);
    this.seedScript = new RedisScript(redis, SEED);
  }

  async read(tenant: string): Promise<ContainmentSnapshot | null> {
    batchWritesThisTick(this.redis);
    const fields = await this.redis.hmget(this.snapshotKey(tenant), ...FIELDS);
    return fields.every((field) => field === null) ? null : parseSnapshot(fields);
  }

  async write(tenant: string, change: ContainmentChange, atMs: number): Promise<ContainmentSnapshot> {
    return parseSnapshot(await this.writeScript.run([this.snapshotKey(tenant)], changeArgs(tenant, change, atMs)));
  }

  async seed(tenant: string, change: ContainmentChange, atMs: number): Promise<ContainmentSnapshot> {
    return parseSnapshot(await this.seedScript.run([this.snapshotKey(tenant)], changeArgs(tenant, change, atMs)));
  }

  private snapshotKey(tenant: string): string {
    return this.keys.key(tenant, 'containment');
  }
}

function changeArgs(tenant: string, change: ContainmentChange, atMs: number): string[] {
  return [tenant, change.state, change.posture, change.reason, new Date(atMs).toISOString()];
}

/**
 * A snapshot from the hash's fields. Anything malformed throws, and the router routes a store
 * error to the isolated pool: a damaged snapshot never reads as `not_contained`.
 */
function parseSnapshot(answer: unknown): ContainmentSnapshot {
  const [tenant, state, posture, reason, version, updatedAt] = Array.isArray(answer) ? (answer as unknown[]) : [];
  const number = typeof version === 'string' ? Number(version) : Number.NaN;
  if (
    typeof tenant !== 'string' ||
    !CONTAINMENT_STATES.includes(state as ContainmentState) ||
    !CONTAINMENT_POSTURES.includes(posture as ContainmentPosture) ||
    typeof reason !== 'string' ||
    !(Number.isSafeInteger(number) && number >= 1) ||
    typeof updatedAt !== 'string'
  ) {
    throw new Error('malformed containment snapshot in Redis');
  }
  return Object.freeze({
    tenant,
    state: state as ContainmentState,
    posture: posture as ContainmentPosture,
    reason,
    version: number,
    updatedAt,
  });
}
