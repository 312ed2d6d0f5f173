import { ResilienceError } from '../../../common';
import { FakeClock } from '../../../common/fake-clock';
import { loopbackUpstreams } from '../../../../test/support/loopback-upstreams';
import { noNetwork } from '../../../../test/support/provider-attempt';
import { json } from '../../../../test/support/upstream';
import { toolCallChoice } from '../../../../test/support/llm-answers';
import type { ChatCompletion, ChatRequest } from '../../chat.types';
import { cleanAnswer } from '../llm-cache-store.contract';
import type { Embedder, EmbeddingHttp } from './embedder';
import { HashingEmbedder } from './hashing-embedder';
import { MemorySemanticCacheStore, type MemorySemanticCacheStoreOptions } from './memory-semantic-cache.store';
import { OpenAiEmbedder } from './openai-embedder';
import { SemanticCache, type SemanticCacheOperation, type SemanticCacheOptions } from './semantic-cache';

const SCOPE = 'chat#digest';
const TTL_MS = 300_000;
const ROOMY: MemorySemanticCacheStoreOptions = { maxEntries: 100, maxEntriesPerPartition: 100, maxBytes: 1 << 20 };

const asking = (question: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'chat',
  messages: [
    { role: 'system', content: 'Answer in one sentence.' },
    { role: 'user', content: question },
  ],
  temperature: 0,
  ...extra,
});

const FRANCE = asking('What is the capital of France?');

/** The hashing embedder, counting the texts it is asked to embed. */
class CountingEmbedder implements Embedder {
  readonly id = 'counting';
  readonly texts: string[] = [];
  private readonly inner = new HashingEmbedder();

  embed(texts: readonly string[]): Promise<Float32Array[]> {
    this.texts.push(...texts);
    return this.inner.embed(texts);
  }
}

/** An embedder that fails every call as the OpenAI one does when its endpoint is down. */
const failingEmbedder: Embedder = {
  id: 'down',
  embed: () => Promise.reject(new ResilienceError('transient', 'embedder openai/m answered 503')),
};

describe('SemanticCache', () => {
  let clock: FakeClock;
  let embedder: CountingEmbedder;
  let store: MemorySemanticCacheStore;

  beforeEach(() => {
    clock = new FakeClock();
    embedder = new CountingEmbedder();
    store = new MemorySemanticCacheStore(clock, ROOMY);
  });

  const cacheOf = (options: Partial<SemanticCacheOptions> = {}, using: Embedder = embedder) =>
    new SemanticCache(store, using, { enabled: true, threshold: 0.95, ttlMs: TTL_MS, ...options });
  const textOf = (match: { completion: ChatCompletion } | null) => match?.completion.choices[0].message.content;

  it('answers the same question with the stored answer, similarity 1', async () => {
    const cache = cacheOf();
    await expect(cache.remember('acme', SCOPE, FRANCE, cleanAnswer('Paris.'), noNetwork)).resolves.toBe(true);

    const match = await cache.find('acme', SCOPE, asking('What is the capital of France?'), noNetwork);

    expect(match).toEqual({ completion: cleanAnswer('Paris.'), similarity: expect.closeTo(1, 5) });
  });

  it('answers a question worded a little differently', async () => {
    const cache = cacheOf();
    await cache.remember('acme', SCOPE, FRANCE, cleanAnswer('Paris.'), noNetwork);

    expect(textOf(await cache.find('acme', SCOPE, asking('what is the capital of FRANCE'), noNetwork))).toBe('Paris.');
  });

  it('misses below the threshold', async () => {
    const cache = cacheOf();
    await cache.remember('acme', SCOPE, FRANCE, cleanAnswer('Paris.'), noNetwork);

    await expect(cache.find('acme', SCOPE, asking('How do I bake bread?'), noNetwork)).resolves.toBeNull();
    await expect(cache.find('acme', SCOPE, asking('What is the capital of Spain?'), noNetwork)).resolves.toBeNull();
  });

  it('serves one question’s answer to another above a loose threshold: the risk it is opt-in for', async () => {
    const cache = cacheOf({ threshold: 0.8 });
    await cache.remember('acme', SCOPE, FRANCE, cleanAnswer('Paris.'), noNetwork);

    expect(textOf(await cache.find('acme', SCOPE, asking('What is the capital of Spain?'), noNetwork))).toBe('Paris.');
  });

  it('compares the questions, not a long system prompt they share', async () => {
    const longPrompt = 'You are a helpful geography assistant for a travel company. '.repeat(20);
    const inContext = (question: string): ChatRequest => ({
      ...asking(question),
      messages: [
        { role: 'system', content: longPrompt },
        { role: 'user', content: question },
      ],
    });
    const cache = cacheOf({ threshold: 0.8 });
    await cache.remember(
      'acme',
      SCOPE,
      inContext('Which river flows through Paris?'),
      cleanAnswer('Seine.'),
      noNetwork,
    );

    await expect(cache.find('acme', SCOPE, inContext('What time zone is Tokyo in?'), noNetwork)).resolves.toBeNull();
  });

  describe('isolation', () => {
    it('never answers tenant B with tenant A’s answer', async () => {
      const cache = cacheOf();
      await cache.remember('tenant-a', SCOPE, FRANCE, cleanAnswer('Paris, for A.'), noNetwork);

      await expect(cache.find('tenant-b', SCOPE, FRANCE, noNetwork)).resolves.toBeNull();
      expect(textOf(await cache.find('tenant-a', SCOPE, FRANCE, noNetwork))).toBe('Paris, for A.');
    });

    it('never answers from another route scope', async () => {
      const cache = cacheOf();
      await cache.remember('acme', SCOPE, FRANCE, cleanAnswer('Paris.'), noNetwork);

      await expect(cache.find('acme', 'chat#changed-targets', FRANCE, noNetwork)).resolves.toBeNull();
    });

    it.each<[string, Partial<ChatRequest>]>([
      ['temperature', { temperature: 0.7 }],
      ['max_tokens', { max_tokens: 10 }],
      ['top_p', { top_p: 0.5 }],
      ['stop', { stop: ['.'] }],
      ['seed', { seed: 42 }],
    ])('misses for the same question with another %s', async (_label, change) => {
      const cache = cacheOf();
      await cache.remember('acme', SCOPE, FRANCE, cleanAnswer('Paris.'), noNetwork);

      await expect(cache.find('acme', SCOPE, { ...FRANCE, ...change }, noNetwork)).resolves.toBeNull();
    });
  });

  describe('what it takes', () => {
    it.each<[string, Partial<ChatRequest>]>([
      ['tools', { tools: [{ type: 'function', function: { name: 'weather' } }] }],
      ['tool_choice', { tool_choice: 'none' }],
      ['response_format', { response_format: { type: 'json_object' } }],
      ['n of 2', { n: 2 }],
      ['logprobs', { logprobs: true }],
    ])('neither stores nor finds a request with %s, and embeds nothing for it', async (_label, change) => {
      const cache = cacheOf();
      await cache.remember('acme', SCOPE, FRANCE, cleanAnswer('Paris.'), noNetwork);
      const embedded = embedder.texts.length;

      await expect(cache.remember('acme', SCOPE, { ...FRANCE, ...change }, cleanAnswer('x'), noNetwork)).resolves.toBe(
        false,
      );
      await expect(cache.find('acme', SCOPE, { ...FRANCE, ...change }, noNetwork)).resolves.toBeNull();

      expect(store.usage().entries).toBe(1);
      expect(embedder.texts).toHaveLength(embedded);
    });

    it.each<[string, ChatCompletion]>([
      ['a tool call', { ...cleanAnswer('x'), choices: [toolCallChoice('c1', 'weather', '{}')] } as ChatCompletion],
      [
        'a refusal',
        {
          ...cleanAnswer('x'),
          choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: 'No.' }, finish_reason: 'stop' }],
        } as unknown as ChatCompletion,
      ],
      [
        'a content filter stop',
        { ...cleanAnswer('x'), choices: [{ ...cleanAnswer('x').choices[0], finish_reason: 'content_filter' }] },
      ],
    ])('does not store %s', async (_label, completion) => {
      const cache = cacheOf();

      await expect(cache.remember('acme', SCOPE, FRANCE, completion, noNetwork)).resolves.toBe(false);
      expect(store.usage().entries).toBe(0);
    });

    it('neither stores nor finds a question with no words', async () => {
      const cache = cacheOf();

      await expect(cache.remember('acme', SCOPE, asking('???'), cleanAnswer('?'), noNetwork)).resolves.toBe(false);
      await expect(cache.find('acme', SCOPE, asking('???'), noNetwork)).resolves.toBeNull();
      expect(store.usage().entries).toBe(0);
    });

    it('does nothing when disabled', async () => {
      const cache = cacheOf({ enabled: false });

      await expect(cache.remember('acme', SCOPE, FRANCE, cleanAnswer('Paris.'), noNetwork)).resolves.toBe(false);
      await expect(cache.find('acme', SCOPE, FRANCE, noNetwork)).resolves.toBeNull();
      expect(embedder.texts).toEqual([]);
    });

    it('stores nothing with a TTL of 0', async () => {
      const cache = cacheOf({ ttlMs: 0 });

      await expect(cache.remember('acme', SCOPE, FRANCE, cleanAnswer('Paris.'), noNetwork)).resolves.toBe(false);
      expect(store.usage().entries).toBe(0);
    });
  });

  describe('time and bounds', () => {
    it('serves an answer for its TTL of the clock, then misses', async () => {
      const cache = cacheOf({ ttlMs: 60_000 });
      await cache.remember('acme', SCOPE, FRANCE, cleanAnswer('Paris.'), noNetwork);

      clock.advance(59_999);
      expect(textOf(await cache.find('acme', SCOPE, FRANCE, noNetwork))).toBe('Paris.');

      clock.advance(1);
      await expect(cache.find('acme', SCOPE, FRANCE, noNetwork)).resolves.toBeNull();
    });

    it('holds at most maxEntries across tenants, the least recently used going first', async () => {
      store = new MemorySemanticCacheStore(clock, { ...ROOMY, maxEntries: 2 });
      const cache = cacheOf();
      await cache.remember('a', SCOPE, FRANCE, cleanAnswer('for a'), noNetwork);
      await cache.remember('b', SCOPE, FRANCE, cleanAnswer('for b'), noNetwork);
      await cache.find('a', SCOPE, FRANCE, noNetwork);

      await cache.remember('c', SCOPE, FRANCE, cleanAnswer('for c'), noNetwork);

      expect(store.usage().entries).toBe(2);
      await expect(cache.find('b', SCOPE, FRANCE, noNetwork)).resolves.toBeNull();
      expect(textOf(await cache.find('a', SCOPE, FRANCE, noNetwork))).toBe('for a');
    });

    it('embeds a request once when its answer is stored after a miss', async () => {
      const cache = cacheOf();
      const request = asking('Who wrote Hamlet?');

      await cache.find('acme', SCOPE, request, noNetwork);
      await cache.remember('acme', SCOPE, request, cleanAnswer('Shakespeare.'), noNetwork);

      expect(embedder.texts).toEqual(['Who wrote Hamlet?']);
    });

    it('embeds again when the same request object now asks something else', async () => {
      const cache = cacheOf();
      const request = asking('Who wrote Hamlet?');
      await cache.find('acme', SCOPE, request, noNetwork);
      request.messages[1] = { role: 'user', content: 'Who wrote Macbeth?' };

      await cache.remember('acme', SCOPE, request, cleanAnswer('Shakespeare.'), noNetwork);

      expect(embedder.texts).toEqual(['Who wrote Hamlet?', 'Who wrote Macbeth?']);
      expect(textOf(await cache.find('acme', SCOPE, asking('Who wrote Macbeth?'), noNetwork))).toBe('Shakespeare.');
    });
  });

  describe('failures', () => {
    it('misses when the embedder fails, and reports it once', async () => {
      const cache = cacheOf({}, failingEmbedder);
      const errors: Array<[unknown, SemanticCacheOperation]> = [];
      cache.onError((error, operation) => errors.push([error, operation]));

      await expect(cache.find('acme', SCOPE, FRANCE, noNetwork)).resolves.toBeNull();
      await expect(cache.remember('acme', SCOPE, FRANCE, cleanAnswer('Paris.'), noNetwork)).resolves.toBe(false);

      expect(errors).toEqual([
        [expect.objectContaining({ kind: 'transient' }), 'find'],
        [expect.objectContaining({ kind: 'transient' }), 'remember'],
      ]);
    });

    it('misses when the store throws', async () => {
      const cache = new SemanticCache(
        {
          nearest: () => {
            throw new Error('store down');
          },
          add: () => undefined,
          usage: () => undefined,
        },
        embedder,
        { enabled: true, threshold: 0.95, ttlMs: TTL_MS },
      );

      await expect(cache.find('acme', SCOPE, FRANCE, noNetwork)).resolves.toBeNull();
    });

    it('misses even when a listener throws, and stops calling a removed listener', async () => {
      const cache = cacheOf({}, failingEmbedder);
      const stop = cache.onError(() => {
        throw new Error('a broken metrics collector');
      });
      const removed: unknown[] = [];
      cache.onError((error) => removed.push(error))();

      await expect(cache.find('acme', SCOPE, FRANCE, noNetwork)).resolves.toBeNull();
      stop();

      expect(removed).toEqual([]);
    });

    it('misses without reporting when the caller has left', async () => {
      const caller = new AbortController();
      const leaving: Embedder = {
        id: 'slow',
        embed: (_texts, _http, signal) => {
          caller.abort(new ResilienceError('stopped', 'the client left'));
          return Promise.reject(signal!.reason);
        },
      };
      const cache = cacheOf({}, leaving);
      const errors: unknown[] = [];
      cache.onError((error) => errors.push(error));

      await expect(cache.find('acme', SCOPE, FRANCE, noNetwork, caller.signal)).resolves.toBeNull();
      expect(errors).toEqual([]);
    });

    it.each([0, -0.1, 1.01, Number.NaN])('refuses a threshold of %p with a RangeError', (threshold) => {
      expect(() => cacheOf({ threshold })).toThrow(RangeError);
    });
  });

  describe('with the OpenAI embedder on a real server', () => {
    const loopback = loopbackUpstreams();
    const VECTORS: Record<string, number[]> = {
      'What is the capital of France?': [1, 0, 0],
      "What's the capital of France?": [0.99, 0.1, 0],
      'How do I bake bread?': [0, 0, 1],
    };

    const openAi = (baseUrl: string) =>
      new OpenAiEmbedder({ baseUrl, apiKey: 'sk-e', model: 'text-embedding-3-small', timeoutMs: 2_000 }, clock);

    it('embeds each question through the tenant’s pool and hits on a paraphrase', async () => {
      const server = await loopback.upstream((request, response) => {
        const { input } = JSON.parse(request.body) as { input: string[] };
        const data = input.map((text, index) => ({ object: 'embedding', index, embedding: VECTORS[text] }));
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
      });
      const cache = cacheOf({}, openAi(server.url('/v1')));
      const pool: EmbeddingHttp = loopback.pool;

      await cache.remember('acme', SCOPE, FRANCE, cleanAnswer('Paris.'), pool);
      const match = await cache.find('acme', SCOPE, asking("What's the capital of France?"), pool);

      expect(textOf(match)).toBe('Paris.');
      expect(match!.similarity).toBeCloseTo(0.995, 3);
      await expect(cache.find('acme', SCOPE, asking('How do I bake bread?'), pool)).resolves.toBeNull();
      expect(server.requests.map((request) => request.path)).toEqual([
        '/v1/embeddings',
        '/v1/embeddings',
        '/v1/embeddings',
      ]);
    });

    it('misses when the embeddings endpoint fails', async () => {
      const server = await loopback.upstream(json(503, { error: { message: 'overloaded' } }));
      const cache = cacheOf({}, openAi(server.url('/v1')));
      const errors: unknown[] = [];
      cache.onError((error) => errors.push(error));

      await expect(cache.find('acme', SCOPE, FRANCE, loopback.pool)).resolves.toBeNull();
      await expect(cache.remember('acme', SCOPE, FRANCE, cleanAnswer('Paris.'), loopback.pool)).resolves.toBe(false);

      expect(server.requests).toHaveLength(2);
      expect(errors).toEqual([
        expect.objectContaining({ kind: 'transient' }),
        expect.objectContaining({ kind: 'transient' }),
      ]);
    });
  });
});
