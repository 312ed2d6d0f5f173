import { promised, type Promised } from '../../common';
import { FakeClock } from '../../common/fake-clock';
import type { ChatCompletion, ChatRequest } from '../chat.types';
import { exactCacheKey } from './cache-key';
import { type CacheableCompletion, isCacheable } from './cacheable';
import type { LlmCacheStore } from './llm-cache.store';

/** Builds the store under test on the given clock (the memory store's only source of time). */
export type MakeLlmCacheStore = (clock: FakeClock) => LlmCacheStore | Promise<LlmCacheStore>;

/** How a suite lets time pass for its store. */
export interface LlmCacheContractOptions {
  /**
   * Lets `ms` pass for the store after its last decision resolved: the clock's virtual time for
   * a store on the clock, real time (at least `ms`) for one whose TTLs its server keeps.
   */
  passTime(clock: FakeClock, ms: number): void | Promise<void>;
}

/**
 * Short enough to wait for in real time, long enough for a local Redis to answer a get before
 * it is over.
 */
export const SHORT_TTL_MS = 250;
const LONG_TTL_MS = 60_000;

const ROUTE = 'chat#route-config-digest';
const REQUEST: ChatRequest = {
  model: 'chat',
  messages: [
    { role: 'system', content: 'Answer in one word.' },
    { role: 'user', content: 'Capital of France?' },
  ],
  temperature: 0,
};

/** A clean text answer, as a cache store takes it. */
export function cleanAnswer(text: string, extra: Record<string, unknown> = {}): CacheableCompletion {
  const completion: ChatCompletion = {
    id: `chatcmpl-${text.length}`,
    object: 'chat.completion',
    created: 1_767_225_600,
    model: 'gpt-4o-mini-2024-07-18',
    choices: [
      { index: 0, message: { role: 'assistant', content: text, refusal: null }, finish_reason: 'stop', logprobs: null },
    ],
    usage: {
      prompt_tokens: 12,
      completion_tokens: 3,
      total_tokens: 15,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    },
    system_fingerprint: 'fp_0123456789',
    ...extra,
  };
  if (!isCacheable(completion)) throw new Error('the fixture must be a clean answer');
  return completion;
}

/**
 * The contract every {@link LlmCacheStore} keeps, asserted only through the interface, so the
 * same suite runs against the memory store (virtual time) and against Redis (its own TTLs, in
 * real time: SHORT_TTL_MS at a time). `cleanup` runs after each test.
 */
export function describeLlmCacheStore(
  name: string,
  makeStore: MakeLlmCacheStore,
  options: LlmCacheContractOptions,
  cleanup?: () => Promise<void>,
): void {
  describe(`LlmCacheStore contract: ${name}`, () => {
    let clock: FakeClock;
    let raw: LlmCacheStore;
    let store: Promised<LlmCacheStore>;

    beforeEach(async () => {
      clock = new FakeClock();
      raw = await makeStore(clock);
      store = promised(raw);
    });

    if (cleanup) afterEach(cleanup);

    const keyOf = (tenant: string, request: ChatRequest = REQUEST) => exactCacheKey(tenant, ROUTE, request);
    const passTime = (ms: number) => Promise.resolve(options.passTime(clock, ms));

    it('misses a key never stored', async () => {
      await expect(store.get(keyOf('acme'))).resolves.toBeNull();
    });

    it('hits with the answer stored, every field as it was', async () => {
      const answer = cleanAnswer('Paris — «ville lumière» 🗼', {
        service_tier: 'default',
        provider_extra: { a: [1, null] },
      });

      await store.set(keyOf('acme'), answer, LONG_TTL_MS);

      await expect(store.get(keyOf('acme'))).resolves.toEqual(answer);
    });

    it('hits within the TTL and misses once it has passed', async () => {
      await store.set(keyOf('acme'), cleanAnswer('Paris'), SHORT_TTL_MS);
      await expect(store.get(keyOf('acme'))).resolves.toEqual(cleanAnswer('Paris'));

      await passTime(SHORT_TTL_MS);

      await expect(store.get(keyOf('acme'))).resolves.toBeNull();
    });

    it('counts the TTL from the latest set', async () => {
      await store.set(keyOf('acme'), cleanAnswer('Paris'), SHORT_TTL_MS);
      await store.set(keyOf('acme'), cleanAnswer('Paris!'), LONG_TTL_MS);

      await passTime(SHORT_TTL_MS);

      await expect(store.get(keyOf('acme'))).resolves.toEqual(cleanAnswer('Paris!'));
    });

    it('answers the latest answer stored under a key', async () => {
      await store.set(keyOf('acme'), cleanAnswer('Paris'), LONG_TTL_MS);
      await store.set(keyOf('acme'), cleanAnswer('Lyon'), LONG_TTL_MS);

      await expect(store.get(keyOf('acme'))).resolves.toEqual(cleanAnswer('Lyon'));
    });

    it('stores nothing for a TTL of 0, and forgets what the key held', async () => {
      await store.set(keyOf('acme'), cleanAnswer('Paris'), 0);
      await expect(store.get(keyOf('acme'))).resolves.toBeNull();

      await store.set(keyOf('acme'), cleanAnswer('Paris'), LONG_TTL_MS);
      await store.set(keyOf('acme'), cleanAnswer('Lyon'), 0);
      await expect(store.get(keyOf('acme'))).resolves.toBeNull();
    });

    it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])(
      'throws a RangeError at once for a TTL of %p, storing nothing',
      async (ttlMs) => {
        expect(() => raw.set(keyOf('acme'), cleanAnswer('Paris'), ttlMs)).toThrow(RangeError);

        await expect(store.get(keyOf('acme'))).resolves.toBeNull();
      },
    );

    it("never answers one tenant with another tenant's answer to the same request", async () => {
      expect(keyOf('team-a')).not.toBe(keyOf('team-b'));

      await store.set(keyOf('team-a'), cleanAnswer('for team A'), LONG_TTL_MS);
      await expect(store.get(keyOf('team-b'))).resolves.toBeNull();

      await store.set(keyOf('team-b'), cleanAnswer('for team B'), LONG_TTL_MS);
      await expect(store.get(keyOf('team-a'))).resolves.toEqual(cleanAnswer('for team A'));
      await expect(store.get(keyOf('team-b'))).resolves.toEqual(cleanAnswer('for team B'));
    });

    it('keeps the answers of different requests apart', async () => {
      const other: ChatRequest = { ...REQUEST, temperature: 0.7 };

      await store.set(keyOf('acme'), cleanAnswer('Paris'), LONG_TTL_MS);
      await store.set(keyOf('acme', other), cleanAnswer('Paris, of course'), LONG_TTL_MS);

      await expect(store.get(keyOf('acme'))).resolves.toEqual(cleanAnswer('Paris'));
      await expect(store.get(keyOf('acme', other))).resolves.toEqual(cleanAnswer('Paris, of course'));
    });

    it('hands every get a copy of its own: changing one changes neither the store nor another caller', async () => {
      await store.set(keyOf('acme'), cleanAnswer('Paris'), LONG_TTL_MS);

      const first = (await store.get(keyOf('acme'))) as CacheableCompletion;
      const second = (await store.get(keyOf('acme')))!;
      first.choices[0].message.content = 'Berlin';
      first.usage.total_tokens = 0;
      first.id = 'changed';

      expect(second).toEqual(cleanAnswer('Paris'));
      await expect(store.get(keyOf('acme'))).resolves.toEqual(cleanAnswer('Paris'));
    });

    it('takes its copy when it stores: later changes to the answer stored are not seen', async () => {
      const answer = cleanAnswer('Paris');

      const stored = store.set(keyOf('acme'), answer, LONG_TTL_MS);
      answer.choices[0].message.content = 'Berlin';
      await stored;

      await expect(store.get(keyOf('acme'))).resolves.toEqual(cleanAnswer('Paris'));
    });
  });
}
