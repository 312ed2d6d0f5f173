import { z } from 'zod';
import { intIn } from '../common';

const MiB = 1024 * 1024;

/** The `idempotency` section of the config file: how long outcomes are replayed, and the stores' bounds. */
export const idempotencySchema = z
  .strictObject({
    /** How long a finished call's outcome is replayed to a repeated key. */
    retentionMs: intIn(1_000, 86_400_000).default(60_000),
    /** Most keys remembered at once; the oldest finished ones go first, in-flight ones never. */
    maxEntries: intIn(1, 10_000_000).default(10_000),
    /**
     * The memory store's bound on the finished outcomes it keeps, in UTF-8 bytes of their JSON, all
     * tenants together; past it the oldest outcomes are dropped (their keys stay, answering
     * `idempotency_conflict`).
     */
    maxBytes: intIn(0, 1024 * MiB).default(64 * MiB),
    /** The same bound for one tenant's keys, so one tenant cannot drop everyone else's outcomes. */
    maxBytesPerTenant: intIn(0, 1024 * MiB).default(16 * MiB),
    /**
     * The largest outcome kept (both stores); a larger one still answers its call, but is not
     * replayed: its key answers `idempotency_conflict` and never runs again.
     */
    maxEntryBytes: intIn(0, 1024 * MiB).default(MiB),
  })
  .refine((bounds) => bounds.maxBytesPerTenant <= bounds.maxBytes, {
    error: 'must not exceed maxBytes',
    path: ['maxBytesPerTenant'],
  })
  .refine((bounds) => bounds.maxEntryBytes <= bounds.maxBytesPerTenant, {
    error: 'must not exceed maxBytesPerTenant',
    path: ['maxEntryBytes'],
  });

/** As the stores read them: every default filled in. */
export type IdempotencyOptions = z.output<typeof idempotencySchema>;
