import type { RedisClient } from '../store';
import { type RedisKeys, RedisReplyError, RedisScript } from '../store';
import type { CacheTicket, ContainmentCache } from './containment-cache';
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

/**
 * ARGV: tenant, state, posture, reason, updatedAt, channel. Answers the snapshot's fields, and
 * publishes the tenant on the channel in the same script: no replica can see the change before
 * the message is on its way.
 */
const WRITE = `local version = redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('HSET', KEYS[1], 'tenant', ARGV[1], 'state', ARGV[2], 'posture', ARGV[3], 'reason', ARGV[4], 'updatedAt', ARGV[5])
redis.call('PUBLISH', ARGV[6], ARGV[1])
return redis.call('HMGET', KEYS[1], ${FIELDS.map((field) => `'${field}'`).join(', ')})`;

/** ARGV: as {@link WRITE}. Writes version 1 (and publishes) only where no snapshot exists; answers the current fields. */
const SEED = `if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'tenant', ARGV[1], 'state', ARGV[2], 'posture', ARGV[3], 'reason', ARGV[4], 'version', 1, 'updatedAt', ARGV[5])
  redis.call('PUBLISH', ARGV[6], ARGV[1])
end
return redis.call('HMGET', KEYS[1], ${FIELDS.map((field) => `'${field}'`).join(', ')})`;

/**
 * A snapshot's fields, read by a script: a script always runs on the primary of its slot, where a
 * plain `HMGET` would go to a replica under `store.cluster.scaleReads: slave | all`, whose lagging
 * copy could route a tenant the operator just contained `hard` on the normal pool (and be cached).
 */
const READ = `return redis.call('HMGET', KEYS[1], ${FIELDS.map((field) => `'${field}'`).join(', ')})`;

/** The channel the write and seed scripts publish each changed tenant on: `<prefix>containment`. */
export function containmentChannel(keys: RedisKeys): string {
  return `${keys.prefix}containment`;
}

/**
 * Containment snapshots in Redis, one hash per tenant (`<prefix>{<tenant>}:containment`), so a
 * change written through one replica routes on every replica from its next read. The version
 * grows inside the write script, so concurrent writes from any replica get distinct versions.
 * Each write (and each seed that writes) publishes the tenant on {@link containmentChannel}.
 *
 * With a {@link ContainmentCache} (kept live by RedisInvalidations), a read of a snapshot this
 * replica already read answers at once, without Redis; while the cache is not live every read
 * goes to Redis as without one. No snapshot (null) is never kept: the router seeds then.
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
  private readonly readScript: RedisScript;
  private readonly channel: string;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
    private readonly cache?: ContainmentCache,
  ) {
    this.writeScript = new RedisScript(redis, WRITE);
    this.seedScript = new RedisScript(redis, SEED);
    this.readScript = new RedisScript(redis, READ);
    this.channel = containmentChannel(keys);
  }

  read(tenant: string): ContainmentSnapshot | Promise<ContainmentSnapshot | null> {
    const cached = this.cache?.get(tenant);
    if (cached) return cached;
    return this.readFromRedis(tenant, this.cache?.ticket());
  }

  async write(tenant: string, change: ContainmentChange, atMs: number): Promise<ContainmentSnapshot> {
    return parseSnapshot(await this.change(this.writeScript, tenant, change, atMs));
  }

  async seed(tenant: string, change: ContainmentChange, atMs: number): Promise<ContainmentSnapshot> {
    return parseSnapshot(await this.change(this.seedScript, tenant, change, atMs));
  }

  private async change(script: RedisScript, tenant: string, change: ContainmentChange, atMs: number) {
    try {
      return await script.run([this.snapshotKey(tenant)], this.changeArgs(tenant, change, atMs));
    } finally {
      // This replica's next read sees the change even before its message comes back (and after
      // a timeout, which may have written all the same).
      this.cache?.invalidate(tenant);
    }
  }

  private async readFromRedis(tenant: string, ticket: CacheTicket): Promise<ContainmentSnapshot | null> {
    const fields = await this.readScript.run([this.snapshotKey(tenant)], []);
    if (Array.isArray(fields) && fields.every((field) => field === null)) return null;
    const snapshot = parseSnapshot(fields);
    this.cache?.put(tenant, snapshot, ticket);
    return snapshot;
  }

  private snapshotKey(tenant: string): string {
    return this.keys.key(tenant, 'containment');
  }

  private changeArgs(tenant: string, change: ContainmentChange, atMs: number): string[] {
    return [tenant, change.state, change.posture, change.reason, new Date(atMs).toISOString(), this.channel];
  }
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
    throw new RedisReplyError('containment', 'a snapshot of this version');
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
