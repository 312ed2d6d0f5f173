/**
 * What an idempotency store keeps at most. Counts and bytes are the memory store's: it lives in
 * the process's heap, which nothing else bounds. A Redis store keeps `maxEntryBytes` alone (its
 * records end by TTL; see `RedisIdempotencyStore`).
 */
export interface IdempotencyBounds {
  /** Keys held at once, in flight and finished; the oldest finished go first. @default 10000 */
  maxEntries: number;
  /** UTF-8 bytes of the finished outcomes' JSON kept at once, all tenants together. @default 64 MiB */
  maxBytes: number;
  /** The same, for one tenant's keys. @default 16 MiB */
  maxBytesPerTenant: number;
  /** The largest outcome kept, in UTF-8 bytes of its JSON; a larger one is not kept. @default 1 MiB */
  maxEntryBytes: number;
}

const MiB = 1024 * 1024;

/** The bounds when the options do not say: room for 64 MiB of outcomes in a 1 GiB heap. */
export const DEFAULT_IDEMPOTENCY_BOUNDS: IdempotencyBounds = {
  maxEntries: 10_000,
  maxBytes: 64 * MiB,
  maxBytesPerTenant: 16 * MiB,
  maxEntryBytes: MiB,
};

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
