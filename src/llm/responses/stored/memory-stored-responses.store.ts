import type { Clock } from '../../../common';
import { RecencyList } from '../../cache/recency-list';
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

interface Entry {
  readonly key: string;
  /** As kept: parsed afresh by every read, so no caller holds the store's copy. */
  readonly json: string;
  readonly bytes: number;
  /** Monotonic ms of the clock; the entry is gone from this moment on. */
  readonly expiresAt: number;
  older: Entry | undefined;
  newer: Entry | undefined;
}

/** Entries looked at for expiry per decision: more than one decision adds, so the sweep outruns growth. */
const SWEEP_STEPS = 3;

/**
 * Kept responses in this process, bounded by the bytes of their JSON (and of their items',
 * indexed by id): a Map and a list in recency order, the least recently used evicted first
 * once over `maxBytes`, expired or not, as the exact cache's memory store does. A response and
 * its items are separate entries, so an evicted response may leave items that still resolve
 * (and the other way round): each is whole on its own.
 *
 * Time is the injected clock's: nothing is answered at or past its expiry; expired entries go
 * when asked for, when evicted, or by a sweep of {@link SWEEP_STEPS} entries per decision.
 */
export class MemoryStoredResponsesStore implements StoredResponsesStore {
  private readonly entries = new Map<string, Entry>();
  private readonly recency = new RecencyList<Entry>();
  private heldBytes = 0;
  private cursor: Entry | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly options: MemoryStoredResponsesOptions,
  ) {
    for (const bound of ['maxBytes', 'maxResponseBytes'] as const) {
      if (!(Number.isSafeInteger(options[bound]) && options[bound] >= 0)) {
        throw new RangeError(`${bound} must be an integer of at least 0`);
      }
    }
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
    this.sweep(now);
    return fits;
  }

  response(tenant: string, id: string): StoredResponse | null {
    return readStoredResponse(this.read(keyOf('r', tenant, id)));
  }

  items(tenant: string, ids: readonly string[]): Array<ResponsesItem | null> {
    return ids.map((id) => readStoredItem(this.read(keyOf('i', tenant, id))));
  }

  /** UTF-8 bytes of the held JSON, expired entries not yet dropped included. */
  get bytes(): number {
    return this.heldBytes;
  }

  /** Entries held (responses and items), expired ones not yet dropped included. */
  get size(): number {
    return this.entries.size;
  }

  private put(key: string, json: string, expiresAt: number): void {
    const previous = this.entries.get(key);
    if (previous) this.remove(previous);
    const bytes = storedBytes(json);
    if (bytes > this.options.maxBytes) return;
    const entry: Entry = { key, json, bytes, expiresAt, older: undefined, newer: undefined };
    this.entries.set(key, entry);
    this.recency.append(entry);
    this.heldBytes += bytes;
    while (this.heldBytes > this.options.maxBytes) this.remove(this.recency.oldest!);
  }

  private read(key: string): string | null {
    const now = this.clock.now();
    this.sweep(now);
    const entry = this.entries.get(key);
    if (!entry) return null;
    if (entry.expiresAt <= now) {
      this.remove(entry);
      return null;
    }
    this.moveCursorOff(entry);
    this.recency.touch(entry);
    return entry.json;
  }

  private sweep(now: number): void {
    const steps = Math.min(SWEEP_STEPS, this.entries.size);
    for (let step = 0; step < steps; step++) {
      const entry = this.cursor ?? this.recency.oldest!;
      this.cursor = entry.newer;
      if (entry.expiresAt <= now) this.remove(entry);
    }
  }

  private remove(entry: Entry): void {
    this.entries.delete(entry.key);
    this.heldBytes -= entry.bytes;
    this.moveCursorOff(entry);
    this.recency.unlink(entry);
  }

  private moveCursorOff(entry: Entry): void {
    if (this.cursor === entry) this.cursor = entry.newer;
  }
}

/** Tenants are names (letters, digits, `_`, `.`, `-`), so the separator cannot occur in one. */
function keyOf(kind: 'r' | 'i', tenant: string, id: string): string {
  return `${kind}:${tenant}:${id}`;
}
