import { z } from 'zod';
import { priorityClass } from '../bulkhead';
import { breakerSchema } from '../circuit-breaker';
import { bool, httpUrl, intIn, name, nonEmptyString, numberIn, oneOf } from '../common';
import { retryBudgetSchema } from '../retry';
import { llmTargetChaosSchema } from './providers/target-chaos.options';

const HOUR_MS = 3_600_000;
const MiB = 1024 * 1024;

/**
 * One scripted answer of a `fake` target, used by one attempt; the last step repeats. A step
 * with `status` fails (with `retryAfterMs` as Retry-After); otherwise it answers `text` or a
 * `toolCall`, after `delayMs` of the clock (an attempt's timeout or the client leaving stops it).
 * Streamed, the answer comes a few words per chunk, `chunkDelayMs` apart, and `cutAfterChunks`
 * drops the connection mid-way.
 */
const fakeStep = z
  .strictObject({
    text: z.string({ error: 'must be a string' }).optional(),
    toolCall: z
      .strictObject({
        name: nonEmptyString(),
        arguments: z.record(z.string(), z.unknown(), { error: 'must be a mapping' }).default({}),
      })
      .optional(),
    status: intIn(400, 599).optional(),
    /** With `status: 429`: the provider's quota is spent (not retried). */
    code: nonEmptyString().optional(),
    retryAfterMs: intIn(0, HOUR_MS).optional(),
    delayMs: intIn(0, HOUR_MS).optional(),
    /** Streamed answers: the wait between one chunk and the next. */
    chunkDelayMs: intIn(0, HOUR_MS).optional(),
    /** Streamed answers: the connection drops after this many content chunks, with no end. */
    cutAfterChunks: intIn(0, 1_000_000).optional(),
    /** Usage the step reports; estimated from the text otherwise. */
    usage: z.strictObject({ promptTokens: intIn(0, 10_000_000), completionTokens: intIn(0, 10_000_000) }).optional(),
  })
  .refine((step) => [step.text, step.toolCall, step.status].filter((part) => part !== undefined).length <= 1, {
    error: 'a step is one of text, toolCall or status',
  });

const target = z
  .strictObject({
    provider: oneOf(['openai', 'anthropic', 'bedrock', 'fake']),
    model: nonEmptyString(),
    baseUrl: httpUrl().optional(),
    apiKey: z.string({ error: 'must be a string' }).optional(),
    /** `bedrock` only: the AWS region; AWS_REGION from the environment otherwise. */
    region: z
      .string({ error: 'must be a string' })
      .regex(/^[a-z]{2}(-[a-z]+)+-\d$/, { error: 'must be an AWS region such as us-east-1' })
      .optional(),
    /**
     * `openai` only: the field the output cap goes in, never both (OpenAI refuses the two
     * together). `max_completion_tokens`, which OpenAI's own API takes for every model, when left
     * out; `max_tokens` for a compatible server that knows only that one.
     */
    maxTokensField: oneOf(['max_completion_tokens', 'max_tokens']).optional(),
    /**
     * `openai` only: whether the model is a reasoning model, whose requests go without
     * `temperature`, `top_p`, `presence_penalty`, `frequency_penalty`, `logprobs`, `top_logprobs`,
     * `logit_bias` and `stop` (it refuses them). Left out: decided by the model's id (o1, o3,
     * o4-mini, gpt-5 and later, but gpt-5-chat-latest).
     */
    reasoning: bool().optional(),
    /**
     * `openai` only: whether the target serves OpenAI's Responses API (`POST {baseUrl}/responses`).
     * A `/v1/responses` request that is not streamed is then sent to it as it came (reasoning
     * items, `include`, `reasoning`, `text` kept), not translated into Chat Completions. Left
     * out: true for OpenAI's own API (api.openai.com), false for any other base URL.
     */
    responsesApi: bool().optional(),
    /** Per attempt at this target; the route's otherwise. */
    timeoutMs: intIn(1, 600_000).optional(),
    /** `fake` only: its answers, one per attempt. */
    script: z.array(fakeStep, { error: 'must be a list' }).min(1, { error: 'must list at least one step' }).optional(),
    /** Faults and latency injected into its attempts, while `chaos.enabled` is true. */
    chaos: llmTargetChaosSchema.optional(),
    /** Its priority group: every target of a lower one is tried first. 0 when left out. */
    priority: intIn(0, 100).optional(),
    /** Its share of the requests of its group under `strategy: weighted`. 1 when left out. */
    weight: numberIn(0.001, 1_000_000).optional(),
    /**
     * Tokens of input and output the model holds; the shipped table's figure for a model it
     * knows otherwise. A request that cannot fit is not sent to it.
     */
    contextWindow: intIn(1, 100_000_000).optional(),
  })
  .refine((value) => value.script === undefined || value.provider === 'fake', {
    error: 'only a fake target has a script',
    path: ['script'],
  })
  .refine((value) => value.region === undefined || value.provider === 'bedrock', {
    error: 'only a bedrock target has a region',
    path: ['region'],
  })
  .refine((value) => value.maxTokensField === undefined || value.provider === 'openai', {
    error: 'only an openai target has a maxTokensField',
    path: ['maxTokensField'],
  })
  .refine((value) => value.reasoning === undefined || value.provider === 'openai', {
    error: 'only an openai target has a reasoning setting',
    path: ['reasoning'],
  })
  .refine((value) => value.responsesApi === undefined || value.provider === 'openai', {
    error: 'only an openai target has a responsesApi setting',
    path: ['responsesApi'],
  });

/** Retries per target: full-jitter backoff, Retry-After honoured. */
const llmRetry = z
  .strictObject({
    maxAttempts: intIn(1, 10).default(2),
    baseDelayMs: intIn(0, 60_000).default(200),
    maxDelayMs: intIn(0, 300_000).default(5_000),
    /**
     * Each target's retry budget, as a tool's (`retry.budget`: 20 % of the calls of the last 10 s,
     * at least 3): a retry on a target spends it, a failover does not; spent, the request moves
     * on to the next target.
     */
    budget: retryBudgetSchema.optional(),
  })
  .refine((value) => value.maxDelayMs >= value.baseDelayMs, {
    error: 'must be at least baseDelayMs',
    path: ['maxDelayMs'],
  })
  .prefault({});

export const llmRoute = z.strictObject({
  /** The lane its requests run in. */
  lane: name(),
  /** Tried by priority group, and inside a group as `strategy` says: the first that answers serves. */
  targets: z.array(target, { error: 'must be a list' }).min(1, { error: 'must list at least one target' }),
  /**
   * How a target is chosen inside a priority group: `ordered` (the config's order),
   * `weighted`, `least-busy` (fewest attempts in flight) or `lowest-latency` (recent average).
   */
  strategy: oneOf(['ordered', 'weighted', 'least-busy', 'lowest-latency']).default('ordered'),
  /** Its requests' class in their lane, unless a caller asks for another (`X-Bulkhead-Priority`); not a target's `priority`. */
  priorityClass: priorityClass().default('standard'),
  retry: llmRetry,
  /** Settings of each target's breaker; `breakers.default` for what is left out. */
  breaker: breakerSchema.optional(),
  /** Per attempt, unless the target sets its own. */
  timeoutMs: intIn(1, 600_000).default(60_000),
  /** All attempts and waits of one request, across every target. */
  deadlineMs: intIn(1, HOUR_MS).default(120_000),
  /** Output cap when the client sets none: sent to the provider, so a reservation is a true bound. */
  maxOutputTokens: intIn(1, 1_000_000).default(4096),
  /** 0: no hedging. Otherwise: a request with no answer (no first content, streamed) after this long starts the next healthy target too. */
  hedgeAfterMs: intIn(0, 600_000).default(0),
  /** Hedges one request may start at most. */
  maxHedges: intIn(1, 4).default(1),
  /** Streamed: the longest wait for a target's first content event (a failed attempt: retried or failed over). */
  firstByteTimeoutMs: intIn(1, 600_000).default(30_000),
  /** Streamed: the longest wait between two events once content flows (the stream then ends with an error). */
  idleTimeoutMs: intIn(1, 600_000).default(30_000),
  /** Clean text answers are cached (llm.cache.exact). */
  cache: bool().default(true),
  /**
   * Opt-in: a question similar enough to one answered before gets that answer
   * (llm.cache.semantic, which must be enabled).
   */
  semanticCache: bool().default(false),
  /**
   * The tenants (of `auth.apiKeys`) that may use the route; left out, every caller may, anonymous
   * included. To any other caller the route does not exist (`404 not_found`, and the error names
   * only the routes it may use).
   */
  tenants: z
    .array(name(), { error: 'must be a list' })
    .min(1, { error: 'must list at least one tenant (leave it out to let every tenant in)' })
    .optional(),
});

/** USD per million tokens of one `provider/model`. */
const price = z.strictObject({
  inputPerMTokUsd: numberIn(0, 10_000),
  outputPerMTokUsd: numberIn(0, 10_000),
  /** Input tokens read from the provider's prompt cache; the input price otherwise. */
  cachedInputPerMTokUsd: numberIn(0, 10_000).optional(),
  /** Input tokens written to the provider's prompt cache for 5 minutes; the input price otherwise. */
  cacheWriteInputPerMTokUsd: numberIn(0, 10_000).optional(),
  /** Input tokens written to the provider's prompt cache for an hour; the 5-minute write price otherwise. */
  cacheWrite1hInputPerMTokUsd: numberIn(0, 10_000).optional(),
});

/** What turns a question into a vector for the semantic cache. */
const embedder = z
  .discriminatedUnion(
    'kind',
    [
      /** Dependency-free and offline: lexical overlap (words and word pairs), not meaning. */
      z.strictObject({ kind: z.literal('hashing'), dimensions: intIn(256, 4096).default(1024) }),
      /** An OpenAI-compatible `POST {baseUrl}/embeddings`, through the tenant's pool. */
      z.strictObject({
        kind: z.literal('openai'),
        baseUrl: httpUrl().default('https://api.openai.com/v1'),
        /** Sent as a bearer token when not empty; give it as `${ENV}`. */
        apiKey: z.string({ error: 'must be a string' }).optional(),
        model: nonEmptyString(),
        /** Asked of the model (text-embedding-3-*); its native size otherwise. */
        dimensions: intIn(1, 16_384).optional(),
        /** The whole embedding request: a slower one is a cache miss. */
        timeoutMs: intIn(1, 60_000).default(2_000),
      }),
    ],
    { error: 'must be one of hashing, openai' },
  )
  .prefault({ kind: 'hashing' });

/**
 * The semantic cache (opt-in per route with `semanticCache: true`): a question whose context and
 * parameters are exactly those of an answered one, and whose text is at least `threshold`
 * similar, gets that answer. Memory only: each replica has its own.
 */
const semanticCache = z
  .strictObject({
    enabled: bool().default(false),
    /** Cosine similarity a hit needs, above 0 and at most 1. */
    threshold: numberIn(0, 1)
      .refine((value) => value > 0, { error: 'must be a number above 0, at most 1' })
      .default(0.95),
    ttlMs: intIn(0, 86_400_000).default(300_000),
    /** Entries held at most, across every tenant and route. */
    maxEntries: intIn(0, 1_000_000).default(10_000),
    /** Entries one tenant's route and parameters hold at most: what one lookup scans. */
    maxEntriesPerPartition: intIn(1, 10_000).default(1_000),
    /** Bytes held at most: the answers' JSON and the vectors (4 bytes a dimension). */
    maxBytes: intIn(0, 1024 * MiB).default(128 * MiB),
    embedder,
  })
  .prefault({});

const DAY_MS = 86_400_000;

/**
 * Responses kept so that a later request may name them (`previous_response_id`) or their output
 * items (`item_reference`), as OpenAI's API keeps them: every `/v1/responses` answer whose
 * request has `store` true or absent, per tenant, in the shared store (Redis with `store.kind:
 * redis`, so any replica resolves them; memory otherwise).
 */
const storedResponses = z
  .strictObject({
    /** Off: nothing is kept, and a request that names a kept response or item is refused. */
    enabled: bool().default(true),
    /** How long a response (and each of its items) can be named after it was answered. */
    ttlMs: intIn(1_000, 30 * DAY_MS).default(HOUR_MS),
    /** The memory store's bound on what it holds (responses' and items' JSON, in bytes), least recently used out first. */
    maxBytes: intIn(0, 1024 * MiB).default(64 * MiB),
    /** A response whose JSON (its whole input and output) is larger is not kept, in either store. */
    maxResponseBytes: intIn(1024, 64 * MiB).default(4 * MiB),
  })
  .prefault({});

/** The `llm` section of the config file: routes, caches, prices. */
export const llmSchema = z
  .strictObject({
    routes: z.record(name(), llmRoute).default({}),
    cache: z
      .strictObject({
        exact: z
          .strictObject({
            ttlMs: intIn(0, 86_400_000).default(300_000),
            maxEntries: intIn(0, 10_000_000).default(10_000),
            /** The memory store's bound on what it holds, answers' JSON in bytes. */
            maxBytes: intIn(0, 1024 * MiB).default(64 * MiB),
          })
          .prefault({}),
        semantic: semanticCache,
      })
      .prefault({}),
    /** Prices by `provider/model`, over the shipped table. */
    prices: z.record(nonEmptyString(), price).default({}),
    /** OpenAI's Responses API (`POST /v1/responses`). */
    responses: z.strictObject({ stored: storedResponses }).prefault({}),
  })
  .prefault({});

/** As the module reads them: every default filled in. */
export type LlmOptions = z.output<typeof llmSchema>;
export type LlmRouteConfig = LlmOptions['routes'][string];
export type LlmTargetConfig = LlmRouteConfig['targets'][number];
export type FakeStepConfig = NonNullable<LlmTargetConfig['script']>[number];
export type LlmPriceConfig = LlmOptions['prices'][string];
export type SemanticCacheConfig = LlmOptions['cache']['semantic'];
export type EmbedderConfig = SemanticCacheConfig['embedder'];
export type StoredResponsesConfig = LlmOptions['responses']['stored'];
