import { Test } from '@nestjs/testing';
import { CLOCK } from '../../../common';
import { FakeClock } from '../../../common/fake-clock';
import { parseConfig } from '../../../config';
import { LLM_MODULE_OPTIONS, type LlmModuleOptions } from '../../llm.module-definition';
import { cleanAnswer } from '../llm-cache-store.contract';
import { HashingEmbedder } from './hashing-embedder';
import { MemorySemanticCacheStore } from './memory-semantic-cache.store';
import { SemanticCache } from './semantic-cache';
import { semanticCacheProviders } from './semantic-cache.providers';
import { SemanticCacheStore } from './semantic-cache.store';
import { noNetwork } from '../../../../test/support/provider-attempt';
import { configOf, problemsOf } from '../../../../test/support/config-results';

const MiB = 1024 * 1024;

/** A valid document with one LLM route; `semantic` as `llm.cache.semantic` when given. */
function document(semantic?: unknown, route: Record<string, unknown> = {}) {
  return {
    lanes: { llm: { concurrency: 1, queueCapacity: 1 } },
    llm: {
      routes: { chat: { lane: 'llm', targets: [{ provider: 'fake', model: 'f' }], ...route } },
      ...(semantic === undefined ? {} : { cache: { semantic } }),
    },
  };
}

describe('llm.cache.semantic', () => {
  it('is off by default, with the hashing embedder, and no route asks for it', () => {
    const config = configOf(parseConfig(document(), {}));

    expect(config.llm.cache.semantic).toEqual({
      enabled: false,
      threshold: 0.95,
      ttlMs: 300_000,
      maxEntries: 10_000,
      maxEntriesPerPartition: 1_000,
      maxBytes: 128 * MiB,
      embedder: { kind: 'hashing', dimensions: 1024 },
    });
    expect(config.llm.routes.chat.semanticCache).toBe(false);
  });

  it('takes an OpenAI-compatible embedder, with its base URL and timeout filled in', () => {
    const semantic = { enabled: true, embedder: { kind: 'openai', model: 'text-embedding-3-small', apiKey: 'sk' } };
    const config = configOf(parseConfig(document(semantic, { semanticCache: true }), {}));

    expect(config.llm.cache.semantic.embedder).toEqual({
      kind: 'openai',
      baseUrl: 'https://api.openai.com/v1',
      apiKey: 'sk',
      model: 'text-embedding-3-small',
      timeoutMs: 2_000,
    });
    expect(config.llm.routes.chat.semanticCache).toBe(true);
  });

  it.each<[string, unknown, string]>([
    ['a threshold of 0', { threshold: 0 }, 'llm.cache.semantic.threshold: must be a number above 0, at most 1'],
    ['a threshold above 1', { threshold: 1.5 }, 'llm.cache.semantic.threshold: must be a number from 0 to 1'],
    [
      'too few hashing dimensions',
      { embedder: { kind: 'hashing', dimensions: 100 } },
      'llm.cache.semantic.embedder.dimensions: must be an integer from 256 to 4096',
    ],
    [
      'an unknown embedder',
      { embedder: { kind: 'word2vec' } },
      'llm.cache.semantic.embedder.kind: must be one of hashing, openai',
    ],
    [
      'an openai embedder without a model',
      { embedder: { kind: 'openai' } },
      'llm.cache.semantic.embedder.model: is required',
    ],
    [
      'an openai embedder with an ftp URL',
      { embedder: { kind: 'openai', model: 'm', baseUrl: 'ftp://x/' } },
      'llm.cache.semantic.embedder.baseUrl: must be an absolute http:// or https:// URL',
    ],
    ['a misspelt key', { treshold: 0.9 }, 'llm.cache.semantic.treshold: unknown key'],
    ['a negative TTL', { ttlMs: -1 }, 'llm.cache.semantic.ttlMs: must be an integer from 0 to 86400000'],
  ])('reports %s', (_label, semantic, problem) => {
    expect(problemsOf(parseConfig(document(semantic), {}))).toEqual([problem]);
  });
});

describe('semanticCacheProviders', () => {
  async function resolve(semantic: unknown) {
    const { llm } = configOf(parseConfig(document(semantic), {}));
    const options: LlmModuleOptions = { llm, budgeted: false };
    const module = await Test.createTestingModule({
      providers: [
        { provide: LLM_MODULE_OPTIONS, useValue: options },
        { provide: CLOCK, useValue: new FakeClock() },
        ...semanticCacheProviders,
      ],
    }).compile();
    return { cache: module.get(SemanticCache), store: module.get<SemanticCacheStore>(SemanticCacheStore) };
  }

  it('builds the cache from llm.cache.semantic, on a memory store with its bounds', async () => {
    const { cache, store } = await resolve({ enabled: true, threshold: 0.9, ttlMs: 1_000, maxEntries: 5 });

    expect(cache).toMatchObject({ enabled: true, threshold: 0.9, ttlMs: 1_000 });
    expect(store).toBeInstanceOf(MemorySemanticCacheStore);
    expect(store).toMatchObject({ maxEntries: 5, maxEntriesPerPartition: 1_000, maxBytes: 128 * MiB });

    const question = { model: 'chat', messages: [{ role: 'user' as const, content: 'Capital of France?' }] };
    await expect(cache.remember('acme', 'chat#s', question, cleanAnswer('Paris.'), noNetwork)).resolves.toBe(true);
    await expect(cache.find('acme', 'chat#s', question, noNetwork)).resolves.not.toBeNull();
  });

  it('builds a disabled cache by default, which stores nothing', async () => {
    const { cache, store } = await resolve(undefined);
    const question = { model: 'chat', messages: [{ role: 'user' as const, content: 'Capital of France?' }] };

    expect(cache.enabled).toBe(false);
    await expect(cache.remember('acme', 'chat#s', question, cleanAnswer('Paris.'), noNetwork)).resolves.toBe(false);
    expect(store.usage()).toMatchObject({ entries: 0 });
  });

  it('uses the configured embedder', async () => {
    const { cache } = await resolve({ enabled: true, embedder: { kind: 'hashing', dimensions: 512 } });

    expect(cache.embedderId).toBe(new HashingEmbedder(512).id);
  });
});
