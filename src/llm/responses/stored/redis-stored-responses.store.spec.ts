import { setTimeout as wait } from 'node:timers/promises';
import { RedisKeys } from '../../../store/redis-keys';
import { closeRedis, connectRedis, hashTag, keysUnder, RedisTestRun } from '../../../../test/support/redis';
import { describeRedis } from '../../../../test/support/redis-availability';
import {
  RedisStoredResponsesStore,
  STORED_ITEM_KEY_KIND,
  STORED_RESPONSE_KEY_KIND,
} from './redis-stored-responses.store';
import { describeStoredResponsesStore, keptResponse } from './stored-responses-store.contract';
import { parseResponsesRequest } from '../responses-request';
import { resolveReferences } from './response-references';

const TTL_MS = 60_000;
const MAX_RESPONSE_BYTES = 16 * 1024;
/** Redis expires a key once its clock is past the deadline it set before replying: this covers a timer firing early. */
const EXPIRY_MARGIN_MS = 20;

describeRedis('RedisStoredResponsesStore', () => {
  const run = RedisTestRun.setUp();
  const storeOn = (keys = run.keys()) => new RedisStoredResponsesStore(run.redis, keys, MAX_RESPONSE_BYTES);

  describeStoredResponsesStore('RedisStoredResponsesStore', () => storeOn(), {
    passTime: (_clock, ms) => wait(ms + EXPIRY_MARGIN_MS),
  });

  it('keeps one string key per response and per output item, tenant and id as hash tag, each with the TTL', async () => {
    const keys = run.keys();
    const store = storeOn(keys);

    await store.keep('acme', keptResponse('resp_1'), TTL_MS);

    const written = await keysUnder(run.redis, keys.prefix);
    expect(written.sort()).toEqual(
      [
        `${keys.prefix}{acme:resp_1}:${STORED_RESPONSE_KEY_KIND}`,
        `${keys.prefix}{acme:msg_resp_1_0}:${STORED_ITEM_KEY_KIND}`,
        `${keys.prefix}{acme:fc_call_resp_1}:${STORED_ITEM_KEY_KIND}`,
      ].sort(),
    );
    expect(hashTag(store.responseKey('acme', 'resp_1'))).toBe('acme:resp_1');
    for (const key of written) {
      const ttl = await run.redis.pttl(key);
      expect(ttl).toBeGreaterThan(TTL_MS - 5_000);
      expect(ttl).toBeLessThanOrEqual(TTL_MS);
    }
  });

  it('shares kept responses between replicas on one prefix, and not across prefixes', async () => {
    const keys = run.keys();
    const replica = new RedisStoredResponsesStore(
      await run.connection(),
      new RedisKeys(keys.prefix),
      MAX_RESPONSE_BYTES,
    );

    await storeOn(keys).keep('acme', keptResponse('resp_1'), TTL_MS);

    await expect(replica.response('acme', 'resp_1')).resolves.toEqual(keptResponse('resp_1'));
    await expect(storeOn().response('acme', 'resp_1')).resolves.toBeNull();
  });

  it.each([
    ['not JSON', '{"id":"resp_1","inp'],
    ['an entry of the wrong shape', JSON.stringify({ id: 'resp_1', input: 'hi', output: [] })],
    [
      'an item that is no item',
      JSON.stringify({ id: 'resp_1', input: [{ type: 'item_reference', id: 'x' }], output: [] }),
    ],
    ['an error body', JSON.stringify({ error: { message: 'nope' } })],
  ])('reads %s as a response never kept', async (_label, value) => {
    const store = storeOn();
    await run.redis.set(store.responseKey('acme', 'resp_1'), value, 'PX', TTL_MS);
    await run.redis.set(store.itemKey('acme', 'msg_1'), value, 'PX', TTL_MS);

    await expect(store.response('acme', 'resp_1')).resolves.toBeNull();
    await expect(store.items('acme', ['msg_1'])).resolves.toEqual([null]);
  });

  it('rejects a read or a write Redis does not answer', async () => {
    const closed = await connectRedis();
    await closeRedis(closed);
    const store = new RedisStoredResponsesStore(closed, run.keys(), MAX_RESPONSE_BYTES);

    await expect(store.response('acme', 'resp_1')).rejects.toThrow();
    await expect(store.items('acme', ['msg_1'])).rejects.toThrow();
    await expect(store.keep('acme', keptResponse('resp_1'), TTL_MS)).rejects.toThrow();
  });

  it('makes a request that needs a store that does not answer unavailable', async () => {
    const closed = await connectRedis();
    await closeRedis(closed);
    const store = new RedisStoredResponsesStore(closed, run.keys(), MAX_RESPONSE_BYTES);
    const request = parseResponsesRequest({ model: 'route', input: 'x', previous_response_id: 'resp_1' });

    await expect(resolveReferences(request, 'acme', store)).rejects.toMatchObject({ kind: 'unavailable', status: 503 });
  });
});
