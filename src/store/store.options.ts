import { z } from 'zod';
import { bool, intIn, nonEmptyString, oneOf } from '../common';

const redisUrl = () =>
  z.string({ error: 'must be a string' }).regex(/^rediss?:\/\//, { error: 'must be a redis:// or rediss:// URL' });

/** `host:port`, the form a Redis Cluster's nodes announce themselves in. */
const hostPort = () =>
  z.string({ error: 'must be a string' }).regex(/^[^\s:]+:\d{1,5}$/, { error: 'must be host:port' });

/** A Redis Cluster: ioredis discovers the rest of the nodes (and the slots) from any of these. */
const cluster = z.strictObject({
  nodes: z.array(redisUrl(), { error: 'must be a list of redis:// URLs' }).min(1, { error: 'must name a node' }),
  /** Addresses the nodes announce → addresses this process reaches them at (NAT, port forwards). */
  natMap: z.record(hostPort(), hostPort()).optional(),
  /**
   * Where reads go. Every decision is a script that writes, so it runs on the slot's primary
   * whatever this says; `slave` or `all` only lets the LLM cache's plain reads use replicas,
   * which may lag behind a write by a moment.
   */
  scaleReads: oneOf(['master', 'slave', 'all']).default('master'),
});

/** A primary and its replicas behind Sentinel: the connection follows the primary through a failover. */
const sentinel = z.strictObject({
  /** The primary's name in Sentinel's config (`sentinel monitor <name> …`). */
  name: nonEmptyString(),
  nodes: z
    .array(redisUrl(), { error: 'must be a list of redis:// URLs of Sentinels' })
    .min(1, { error: 'must name a Sentinel' }),
  /**
   * Only the primary: decisions write, and a replica refuses writes (or, read, answers from the
   * past).
   */
  role: z.literal('master', { error: 'must be master: decisions write, which replicas refuse' }).default('master'),
  /** Sentinel's own password (`requirepass` of the Sentinels), when they have one. */
  password: z.string({ error: 'must be a string' }).optional(),
});

/**
 * TLS to Redis: `true` with the system's CAs, or the PEM (from `${ENV}`) of the CA that signs the
 * servers' certificates and, when it differs from the host, the name to check them against.
 */
const tls = z.union([
  bool(),
  z.strictObject({
    ca: nonEmptyString().optional(),
    servername: nonEmptyString().optional(),
    rejectUnauthorized: bool().default(true),
  }),
]);

/**
 * The Redis store: one Redis (`url`), a Redis Cluster (`cluster`) or a primary behind Sentinel
 * (`sentinel`), exactly one of the three. `username`, `password` and `tls` apply to every Redis
 * node (credentials in `url`, or in the cluster nodes' URLs, work too; those in the Sentinels'
 * URLs are the Sentinels' own); use `${ENV}` for secrets.
 */
export const redisStoreSchema = z
  .strictObject({
    kind: z.literal('redis'),
    url: redisUrl().optional(),
    cluster: cluster.optional(),
    sentinel: sentinel.optional(),
    username: nonEmptyString().optional(),
    password: z.string({ error: 'must be a string' }).optional(),
    tls: tls.optional(),
    prefix: z.string({ error: 'must be a string' }).max(64, { error: 'must be at most 64 characters' }).default('bh:'),
    commandTimeoutMs: intIn(10, 60_000).default(500),
  })
  .superRefine((store, context) => {
    const given = (['url', 'cluster', 'sentinel'] as const).filter((field) => store[field] !== undefined);
    if (given.length !== 1) {
      context.addIssue({
        code: 'custom',
        message:
          given.length === 0
            ? 'needs one of url, cluster, sentinel'
            : `takes one of url, cluster, sentinel, not ${given.join(' and ')}`,
        path: [],
      });
    }
  });

export type RedisStoreConfig = z.output<typeof redisStoreSchema>;

export const storeSchema = z
  .discriminatedUnion('kind', [z.strictObject({ kind: z.literal('memory') }), redisStoreSchema], {
    error: 'must be one of memory, redis',
  })
  .prefault({ kind: 'memory' });

/** The `store` section of the config file: memory, or Redis with its URL, key prefix and topology. */
export type StoreOptions = z.output<typeof storeSchema>;
