import { setTimeout as wait } from 'node:timers/promises';
import { RedisKeys } from '../../store/redis-keys';
import { exactCacheKey } from './cache-key';
import { cleanAnswer, describeLlmCacheStore, SHORT_TTL_MS } from './llm-cache-store.contract';
import type { LlmCacheOperation } from './llm-cache.store';
import { LLM_CACHE_KEY_KIND, RedisLlmCacheStore } from './redis-llm-cache.store';
import { closeRedis, connectRedis, hashTag, keysUnder, RedisTestRun } from '../../../test/support/redis';
import { describeRedis } from '../../../test/support/redis-availability';
import { toolCallChoice } from '../../../test/support/llm-answers';

const TTL_MS = 60_000;
/**
 * Waited past a TTL before the contract asks again. Redis expires a key once its own clock is
 * past the deadline, which it set when it ran the SET, before the reply that starts our wait:
 * the margin only covers a timer that fires a millisecond early.
 */
const EXPIRY_MARGIN_MS = 20;

describeRedis('RedisLlmCacheStore', () => {
  const run = RedisTestRun.setUp();

  // TTLs are Redis's own, so the contract's time passes for real: SHORT_TTL_MS and a margin,
  // once per TTL test. The exact TTL Redis holds is checked below with PTTL.
  describeLlmCacheStore('RedisLlmCacheStore', () => new RedisLlmCacheStore(run.redis, run.keys()), {
    passTime: (_clock, ms) => wait(ms + EXPIRY_MARGIN_MS),
  });

  const key = exactCacheKey('acme', 'chat#digest', { model: 'chat', messages: [{ role: 'user', content: 'Hi' }] });

  /** A store on a connection that is closed: every command fails at once. */
  async function storeOnClosedConnection() {
    const closed = await connectRedis();
    await closeRedis(closed);
    const store = new RedisLlmCacheStore(closed, run.keys());
    const errors: Array<[unknown, LlmCacheOperation]> = [];
    store.onError((error, operation) => errors.push([error, operation]));
    return { store, errors };
  }

  it('keeps one string key per answer under the prefix, the cache key as hash tag, its JSON as value', async () => {
    const keys = run.keys();
    const store = new RedisLlmCacheStore(run.redis, keys);

    await store.set(key, cleanAnswer('Hello'), TTL_MS);

    const written = await keysUnder(run.redis, keys.prefix);
    expect(written).toEqual([`${keys.prefix}{${key}}:${LLM_CACHE_KEY_KIND}`]);
    expect(store.entryKey(key)).toBe(written[0]);
    expect(hashTag(written[0])).toBe(key);
    await expect(run.redis.type(written[0])).resolves.toBe('string');
    expect(JSON.parse((await run.redis.get(written[0]))!)).toEqual(cleanAnswer('Hello'));
  });

  it('gives each key the TTL of its latest set, in Redis', async () => {
    const store = new RedisLlmCacheStore(run.redis, run.keys());

    await store.set(key, cleanAnswer('Hello'), TTL_MS);
    const first = await run.redis.pttl(store.entryKey(key));
    expect(first).toBeGreaterThan(TTL_MS - 1_000);
    expect(first).toBeLessThanOrEqual(TTL_MS);

    await store.set(key, cleanAnswer('Hello'), 5_000);
    const second = await run.redis.pttl(store.entryKey(key));
    expect(second).toBeGreaterThan(4_000);
    expect(second).toBeLessThanOrEqual(5_000);
  });

  it('deletes the key for a TTL of 0', async () => {
    const store = new RedisLlmCacheStore(run.redis, run.keys());
    await store.set(key, cleanAnswer('Hello'), TTL_MS);

    await store.set(key, cleanAnswer('Hello'), 0);

    await expect(run.redis.exists(store.entryKey(key))).resolves.toBe(0);
  });

  it('shares answers between replicas on one prefix, and not across prefixes', async () => {
    const keys = run.keys();
    const first = new RedisLlmCacheStore(run.redis, keys);
    const replica = new RedisLlmCacheStore(await run.connection(), new RedisKeys(keys.prefix));
    const elsewhere = new RedisLlmCacheStore(run.redis, run.keys());

    await first.set(key, cleanAnswer('Hello'), TTL_MS);

    await expect(replica.get(key)).resolves.toEqual(cleanAnswer('Hello'));
    await expect(elsewhere.get(key)).resolves.toBeNull();
  });

  it('answers a miss when Redis does not answer, and reports it once', async () => {
    const { store, errors } = await storeOnClosedConnection();

    await expect(store.get(key)).resolves.toBeNull();

    expect(errors).toEqual([[expect.any(Error), 'get']]);
  });

  it('drops a write Redis does not take, and reports it once', async () => {
    const { store, errors } = await storeOnClosedConnection();

    await expect(store.set(key, cleanAnswer('Hello'), TTL_MS)).resolves.toBeUndefined();
    await expect(store.set(key, cleanAnswer('Hello'), 0)).resolves.toBeUndefined();

    expect(errors).toEqual([
      [expect.any(Error), 'set'],
      [expect.any(Error), 'set'],
    ]);
  });

  it.each([
    ['not JSON', '{"object":"chat.comp'],
    ['a tool call', JSON.stringify({ ...cleanAnswer('x'), choices: [toolCallChoice('c1', 'f', '{}')] })],
    [
      'an error body',
      JSON.stringify({ error: { message: 'Rate limit reached', type: 'rate_limit_error', param: null, code: null } }),
    ],
  ])('answers a miss for a value that is %s, and reports it', async (_label, value) => {
    const store = new RedisLlmCacheStore(run.redis, run.keys());
    const errors: LlmCacheOperation[] = [];
    store.onError((_error, operation) => errors.push(operation));
    await run.redis.set(store.entryKey(key), value, 'PX', TTL_MS);

    await expect(store.get(key)).resolves.toBeNull();

    expect(errors).toEqual(['get']);
  });

  it('answers a miss even when a listener throws, and stops calling a removed listener', async () => {
    const { store, errors } = await storeOnClosedConnection();
    const stop = store.onError(() => {
      throw new Error('a broken metrics collector');
    });

    await expect(store.get(key)).resolves.toBeNull();
    stop();
    const removed: unknown[] = [];
    store.onError((error) => removed.push(error))();
    await expect(store.get(key)).resolves.toBeNull();

    expect(errors.map(([, operation]) => operation)).toEqual(['get', 'get']);
    expect(removed).toEqual([]);
  });

  it('reports no usage of its own', () => {
    expect(new RedisLlmCacheStore(run.redis, run.keys()).usage()).toBeUndefined();
  });

  it('misses once Redis has expired the key', async () => {
    const store = new RedisLlmCacheStore(run.redis, run.keys());
    await store.set(key, cleanAnswer('Hello'), SHORT_TTL_MS);

    await wait(SHORT_TTL_MS + EXPIRY_MARGIN_MS);

    await expect(run.redis.exists(store.entryKey(key))).resolves.toBe(0);
    await expect(store.get(key)).resolves.toBeNull();
  });
});
