import { batchWritesThisTick, type RedisClient, type RedisKeys } from '../../../store';
import type { ResponsesItem } from '../../wire';
import { itemsById, readStoredItem, readStoredResponse } from './stored-response.reader';
import { assertKeepTtl, type StoredResponse, type StoredResponsesStore, storedBytes } from './stored-responses.store';

/** The kind of the key that holds one kept response: `<prefix>{<tenant>:<resp id>}:rsp`. */
export const STORED_RESPONSE_KEY_KIND = 'rsp';
/** The kind of the key that holds one kept output item: `<prefix>{<tenant>:<item id>}:rsi`. */
export const STORED_ITEM_KEY_KIND = 'rsi';

/**
 * Kept responses shared by replicas: one string key per response and one per output item, the
 * JSON as value, the TTL Redis's own (`SET … PX`), so replicas with skewed clocks agree. The
 * tenant and the id are the hash tag: one tenant's responses spread over a cluster's slots, and
 * no key of one tenant is another's. Writes are one `SET` per key, sent together; reads one `GET`
 * per key.
 *
 * Bounded per entry (`maxResponseBytes`: a larger response is not kept) and by the TTL every key
 * carries; Redis's own `maxmemory` (with a volatile eviction policy) bounds the rest. What a
 * read finds is validated (stored-response.reader.ts): a value that is not a clean kept response
 * reads as none. A command Redis does not answer rejects, for the caller to decide.
 */
export class RedisStoredResponsesStore implements StoredResponsesStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
    private readonly maxResponseBytes: number,
  ) {}

  keep(tenant: string, response: StoredResponse, ttlMs: number): Promise<boolean> {
    // Checked before any promise, as the memory store throws it: a caller that does not wait still hears of it.
    assertKeepTtl(ttlMs);
    const json = JSON.stringify(response);
    if (storedBytes(json) > this.maxResponseBytes) return Promise.resolve(false);
    return this.write(tenant, response, json, ttlMs);
  }

  private async write(tenant: string, response: StoredResponse, json: string, ttlMs: number): Promise<boolean> {
    batchWritesThisTick(this.redis);
    const writes = [this.redis.set(this.responseKey(tenant, response.id), json, 'PX', ttlMs)];
    for (const [id, item] of itemsById(response)) {
      writes.push(this.redis.set(this.itemKey(tenant, id), item, 'PX', ttlMs));
    }
    await Promise.all(writes);
    return true;
  }

  async response(tenant: string, id: string): Promise<StoredResponse | null> {
    batchWritesThisTick(this.redis);
    return readStoredResponse(await this.redis.get(this.responseKey(tenant, id)));
  }

  async items(tenant: string, ids: readonly string[]): Promise<Array<ResponsesItem | null>> {
    batchWritesThisTick(this.redis);
    const values = await Promise.all(ids.map((id) => this.redis.get(this.itemKey(tenant, id))));
    return values.map(readStoredItem);
  }

  /** The Redis key of the response `id` of `tenant`. */
  responseKey(tenant: string, id: string): string {
    return this.keys.key(`${tenant}:${id}`, STORED_RESPONSE_KEY_KIND);
  }

  /** The Redis key of the output item `id` of `tenant`. */
  itemKey(tenant: string, id: string): string {
    return this.keys.key(`${tenant}:${id}`, STORED_ITEM_KEY_KIND);
  }
}
