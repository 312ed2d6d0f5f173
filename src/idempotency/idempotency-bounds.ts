import { idempotencySchema, type IdempotencyOptions } from './idempotency.options';

/**
 * What an idempotency store keeps at most. Counts and bytes are the memory store's: it lives in
 * the process's heap, which nothing else bounds. A Redis store keeps `maxEntryBytes` alone (its
 * records end by TTL; see `RedisIdempotencyStore`).
 */
export type IdempotencyBounds = Omit<IdempotencyOptions, 'retentionMs'>;

const { retentionMs, ...bounds } = idempotencySchema.parse({});

/** How long an outcome is replayed when the options do not say. */
export const DEFAULT_RETENTION_MS = retentionMs;

/** The bounds when the options do not say (the schema's defaults): room for 64 MiB of outcomes in a 1 GiB heap. */
export const DEFAULT_IDEMPOTENCY_BOUNDS: Readonly<IdempotencyBounds> = Object.freeze(bounds);

/** The configured bounds, each filled in from the defaults where it is not given. */
export function idempotencyBounds(given: Partial<IdempotencyBounds> | undefined): IdempotencyBounds {
  return { ...DEFAULT_IDEMPOTENCY_BOUNDS, ...definedOnly(given ?? {}) };
}

/**
 * Checks bounds handed to a store.
 * @throws RangeError unless maxEntries is an integer of at least 1 and the byte bounds integers of at least 0.
 */
export function assertIdempotencyBounds(bounds: IdempotencyBounds): void {
  if (!(Number.isSafeInteger(bounds.maxEntries) && bounds.maxEntries >= 1)) {
    throw new RangeError('maxEntries must be an integer of at least 1');
  }
  for (const bound of ['maxBytes', 'maxBytesPerTenant', 'maxEntryBytes'] as const) {
    if (!(Number.isSafeInteger(bounds[bound]) && bounds[bound] >= 0)) {
      throw new RangeError(`${bound} must be an integer of at least 0`);
    }
  }
}

function definedOnly(given: Partial<IdempotencyBounds>): Partial<IdempotencyBounds> {
  return Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
}
