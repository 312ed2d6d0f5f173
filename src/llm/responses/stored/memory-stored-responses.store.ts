import type { Clock } from '../../../common';
import { ExpiringEntries } from '../../cache/expiring-entries';
import type { ResponsesItem } from '../../wire';
import { itemsById, readStoredItem, readStoredResponse } from './stored-response.reader';
import { assertKeepTtl, type StoredResponse, type StoredResponsesStore, storedBytes } from './stored-responses.store';

/** The bounds of a {@link MemoryStoredResponsesStore}. */
export interface MemoryStoredResponsesOptions {
  /** UTF-8 bytes of the held responses' and items' JSON at most; 0 keeps nothing. */
  maxBytes: number;
  /** A response whose JSON is larger is not kept. */
  maxResponseBytes: number;
}

/**
 * Kept responses in this process, bounded by the bytes of their JSON (and of their items',
 * indexed by id): a Map and a list in recency order, the least recently used evicted first
 * once over `maxBytes`, expired or not, as the exact cache's memory store does. A response and
 * its items are separate entries, so an evicted response may leave items that still resolve
 * (and the other way round): each is whole on its own.
 *
 * Time is the injected clock's: nothing is answered at or past its expiry ({@link ExpiringEntries}).
 */
export class MemoryStoredResponsesStore implements StoredResponsesStore {
  private readonly entries: ExpiringEntries;

  constructor(
    private readonly clock: Clock,
    private readonly options: MemoryStoredResponsesOptions,
  ) {
    for (const bound of ['maxBytes', 'maxResponseBytes'] as const) {
      if (!(Number.isSafeInteger(options[bound]) && options[bound] >= 0)) {
        throw new RangeError(`${bound} must be an integer of at least 0`);
      }
    }
    this.entries = new ExpiringEntries(clock, options.maxBytes);
  }

  keep(tenant: string, response: StoredResponse, ttlMs: number): boolean {
    assertKeepTtl(ttlMs);
    const now = this.clock.now();
    const json = JSON.stringify(response);
    const fits = storedBytes(json) <= this.options.maxResponseBytes;
    if (fits) {
      const expiresAt = now + ttlMs;
      this.put(keyOf('r', tenant, response.id), json, expiresAt);
      for (const [id, item] of itemsById(response)) this.put(keyOf('i', tenant, id), item, expiresAt);
    }
    this.entries.sweep(now);
    return fits;
  }

  response(tenant: string, id: string): StoredResponse | null {
    return readStoredResponse(this.entries.read(keyOf('r', tenant, id)));
  }

  items(tenant: string, ids: readonly string[]): Array<ResponsesItem | null> {
    return ids.map((id) => readStoredItem(this.entries.read(keyOf('i', tenant, id))));
  }

  /** UTF-8 bytes of the held JSON, expired entries not yet dropped included. */
  get bytes(): number {
    return this.entries.bytes;
  }

  /** Entries held (responses and items), expired ones not yet dropped included. */
  get size(): number {
    return this.entries.size;
  }

  private put(key: string, json: string, expiresAt: number): void {
    this.entries.put(key, json, storedBytes(json), expiresAt);
  }
}

/** Tenants are names (letters, digits, `_`, `.`, `-`), so the separator cannot occur in one. */
function keyOf(kind: 'r' | 'i', tenant: string, id: string): string {
  return `${kind}:${tenant}:${id}`;
}
