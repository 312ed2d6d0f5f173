/**
 * What each side of the LLM proxy benchmark sends and expects back, the service's config, and
 * the probe that checks a side answers in full before it is measured.
 */
import type { ApiKey } from '../support/service';
import { call } from '../support/service';
import { ANSWER_TEXT, EMBED_MODEL, EMBED_USAGE, EMBEDDING, MODEL, type OpenAiUpstream, USAGE } from './openai-upstream';
import type { Side } from './summary';

/** The service's route with its cache off: every request goes to the upstream. */
export const ROUTE = 'chat';
/** The same target with the exact cache on: after the first, every request is a hit. */
export const CACHED_ROUTE = 'chat-cached';
export const TARGET_LABEL = `openai/${MODEL}`;
/** The service's embeddings route, cache off, to the upstream's embeddings model. */
export const EMBED_ROUTE = 'embed';
export const EMBED_TARGET_LABEL = `openai/${EMBED_MODEL}`;
/** An http tool forwarding to the same endpoint: the service's plain proxy path, for contrast. */
export const TOOL = 'chat_tool';
const LANE = 'llm';

/** What an OpenAI client sends for a short question, as the `openai` SDK would. */
const MESSAGES = [
  { role: 'system', content: 'You are a terse assistant.' },
  { role: 'user', content: 'Say hello.' },
];
/**
 * Each side's request names it in `user` (which every proxy here passes on): the upstream counts
 * a side's requests apart from another's late ones.
 */
export function userOf(side: Side): string {
  return `bench-${side}`;
}

/** The provider key the clients of the upstream and of Portkey send (the upstream reads none). */
const PROVIDER_KEY = 'sk-bench-not-a-real-key';

export interface Endpoint {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Substrings every answer's body must hold. */
  expect: readonly string[];
}

/** Every side's answer: the upstream's text and usage, whichever way it came. */
const COMMON_EXPECT = [`"content":"${ANSWER_TEXT}"`, `"total_tokens":${USAGE.total_tokens}`];

/**
 * The service's config: one API-key tenant (routed to the normal pool), the two routes and the
 * tool in a lane and a pool too big to limit anything, egress to loopback only, no rate limit or
 * budget.
 */
export function serviceConfig(upstream: OpenAiUpstream, key: ApiKey, connections: number) {
  const target = { provider: 'openai', model: MODEL, baseUrl: upstream.baseUrl, apiKey: PROVIDER_KEY };
  return {
    auth: { allowAnonymous: false, apiKeys: [key.entry] },
    lanes: { [LANE]: { concurrency: 256, queueCapacity: 1024 } },
    tools: {
      [TOOL]: {
        lane: LANE,
        kind: 'http',
        url: `${upstream.baseUrl}/chat/completions`,
        headers: { authorization: `Bearer ${PROVIDER_KEY}` },
        timeoutMs: 10_000,
        retry: { maxAttempts: 1 },
      },
    },
    containment: {
      pools: { normalMaxConcurrency: 2 * connections },
      egress: { allowHosts: ['127.0.0.1'], allowPrivateCidrs: ['127.0.0.0/8'] },
    },
    llm: {
      routes: {
        [ROUTE]: { lane: LANE, targets: [target], cache: false },
        [CACHED_ROUTE]: { lane: LANE, targets: [target], cache: true },
        [EMBED_ROUTE]: { lane: LANE, targets: [{ ...target, model: EMBED_MODEL }], cache: false },
      },
    },
  };
}

export function directEndpoint(upstream: OpenAiUpstream): Endpoint {
  return {
    url: `${upstream.baseUrl}/chat/completions`,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${PROVIDER_KEY}` },
    body: JSON.stringify({ model: MODEL, messages: MESSAGES, user: userOf('direct') }),
    expect: COMMON_EXPECT,
  };
}

/** The direct side's request through the floor proxy (bench/llm-proxy/floor-proxy.ts). */
export function floorEndpoint(floorBase: string, upstream: OpenAiUpstream): Endpoint {
  const direct = directEndpoint(upstream);
  return {
    ...direct,
    url: `${floorBase}/v1/chat/completions`,
    body: JSON.stringify({ model: MODEL, messages: MESSAGES, user: userOf('floor') }),
  };
}

export function serviceEndpoint(serviceBase: string, key: ApiKey, cached: boolean): Endpoint {
  return {
    url: `${serviceBase}/v1/chat/completions`,
    headers: key.headers,
    body: JSON.stringify({
      model: cached ? CACHED_ROUTE : ROUTE,
      messages: MESSAGES,
      user: userOf(cached ? 'cached' : 'service'),
    }),
    expect: [...COMMON_EXPECT, `"fromCache":${cached}`],
  };
}

/**
 * The same question through Anthropic's Messages API (`POST /v1/messages`) to the same route:
 * the ingress's translation both ways, on top of the chat route's path.
 */
export function messagesEndpoint(serviceBase: string, key: ApiKey): Endpoint {
  return {
    url: `${serviceBase}/v1/messages`,
    headers: { ...key.headers, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({
      model: ROUTE,
      max_tokens: 1024,
      system: MESSAGES[0].content,
      messages: [MESSAGES[1]],
      metadata: { user_id: userOf('messages') },
    }),
    expect: [`"text":"${ANSWER_TEXT}"`, `"output_tokens":${USAGE.completion_tokens}`],
  };
}

/** The same question through OpenAI's Responses API (`POST /v1/responses`) to the same route. */
export function responsesEndpoint(serviceBase: string, key: ApiKey): Endpoint {
  return {
    url: `${serviceBase}/v1/responses`,
    headers: key.headers,
    body: JSON.stringify({
      model: ROUTE,
      instructions: MESSAGES[0].content,
      input: MESSAGES[1].content,
      user: userOf('responses'),
    }),
    expect: [`"text":"${ANSWER_TEXT}"`, `"total_tokens":${USAGE.total_tokens}`],
  };
}

/** Every embeddings side's answer: the upstream's vector and usage. */
const EMBEDDINGS_EXPECT = [`"embedding":${JSON.stringify(EMBEDDING)}`, `"total_tokens":${EMBED_USAGE.total_tokens}`];

/** What a retrieval step sends: one short text, floats back. */
function embeddingsBody(model: string, side: Side): string {
  return JSON.stringify({ model, input: MESSAGES[1].content, encoding_format: 'float', user: userOf(side) });
}

/** The upstream's embeddings endpoint itself: the embeddings side's baseline. */
export function directEmbeddingsEndpoint(upstream: OpenAiUpstream): Endpoint {
  return {
    url: `${upstream.baseUrl}/embeddings`,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${PROVIDER_KEY}` },
    body: embeddingsBody(EMBED_MODEL, 'embed-direct'),
    expect: EMBEDDINGS_EXPECT,
  };
}

/** The same through the service's `POST /v1/embeddings` route. */
export function embeddingsEndpoint(serviceBase: string, key: ApiKey): Endpoint {
  return {
    url: `${serviceBase}/v1/embeddings`,
    headers: key.headers,
    body: embeddingsBody(EMBED_ROUTE, 'embeddings'),
    expect: [...EMBEDDINGS_EXPECT, '"fromCache":false'],
  };
}

/** The tool POSTs its arguments as the JSON body: the same request as the direct side's. */
export function toolEndpoint(serviceBase: string, key: ApiKey): Endpoint {
  return {
    url: `${serviceBase}/v1/tools/${TOOL}/invoke`,
    headers: key.headers,
    body: JSON.stringify({ arguments: { model: MODEL, messages: MESSAGES, user: userOf('tool') } }),
    expect: [...COMMON_EXPECT, '"pool":"normal"'],
  };
}

/** Portkey's OpenAI provider with the upstream as its custom host: it POSTs to `<host>/chat/completions`. */
export function portkeyEndpoint(portkeyBase: string, upstream: OpenAiUpstream): Endpoint {
  return {
    url: `${portkeyBase}/v1/chat/completions`,
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${PROVIDER_KEY}`,
      'x-portkey-provider': 'openai',
      'x-portkey-custom-host': upstream.baseUrl,
    },
    body: JSON.stringify({ model: MODEL, messages: MESSAGES, user: userOf('portkey') }),
    expect: COMMON_EXPECT,
  };
}

/**
 * One call to `endpoint`, checked in full: 200, the upstream's answer (text, usage), the upstream
 * reached `reaches` times, and for the service who served it and how. Answers what is wrong, or
 * undefined.
 */
export async function probe(
  side: Side,
  endpoint: Endpoint,
  upstream: OpenAiUpstream,
  reaches: number,
): Promise<string | undefined> {
  const before = (await upstream.stats()).byUser[userOf(side)] ?? 0;
  const answer = await call(endpoint.url, { method: 'POST', headers: endpoint.headers, body: endpoint.body });
  const reached = ((await upstream.stats()).byUser[userOf(side)] ?? 0) - before;
  const what = `${side}'s probe answered ${answer.status} ${answer.text.slice(0, 300)}`;
  if (answer.status !== 200) return what;
  let read: { text: unknown; tokens: unknown };
  try {
    read = textAndTokens(side, JSON.parse(answer.text));
  } catch {
    return `${what}: not JSON`;
  }
  const embeds = side === 'embed-direct' || side === 'embeddings';
  if (read.text !== (embeds ? JSON.stringify(EMBEDDING) : ANSWER_TEXT)) return `${what}: not the upstream's text`;
  if (read.tokens !== (embeds ? EMBED_USAGE : USAGE).total_tokens) return `${what}: not the upstream's usage`;
  if (reached !== reaches) return `${what}: reached the upstream ${reached} times, not ${reaches}`;
  if (side !== 'direct' && side !== 'floor' && side !== 'tool' && side !== 'portkey' && side !== 'embed-direct') {
    const cache = side === 'cached' ? (reaches === 0 ? 'hit' : 'miss') : 'bypass';
    const headers = { servedBy: answer.headers['x-bulkhead-served-by'], cache: answer.headers['x-bulkhead-cache'] };
    const servedBy = cache === 'hit' ? 'cache' : embeds ? EMBED_TARGET_LABEL : TARGET_LABEL;
    if (headers.servedBy !== servedBy || headers.cache !== cache) {
      return `${what}: served by ${headers.servedBy} (cache ${headers.cache}), not ${servedBy} (cache ${cache})`;
    }
  }
  // The request that fills the cache is a miss, answered as the uncached route would.
  const expect =
    side === 'cached' && reaches > 0
      ? endpoint.expect.map((part) => part.replace('"fromCache":true', '"fromCache":false'))
      : endpoint.expect;
  if (!expect.every((part) => answer.text.includes(part))) return `${what}: lacks one of ${expect.join(' ')}`;
  return undefined;
}

/** An answer's text (an embeddings answer's: its vector's JSON) and total tokens, in the wire its side speaks. */
function textAndTokens(side: Side, answer: unknown): { text: unknown; tokens: unknown } {
  type Body = {
    data?: Array<{ embedding?: unknown }>;
    choices?: Array<{ message?: { content?: unknown } }>;
    content?: Array<{ text?: unknown }>;
    output?: Array<{ content?: Array<{ text?: unknown }> }>;
    usage?: Record<string, number>;
    result?: Body;
  };
  const body = (answer ?? {}) as Body;
  if (side === 'messages') {
    const usage = body.usage ?? {};
    return { text: body.content?.[0]?.text, tokens: (usage.input_tokens ?? 0) + (usage.output_tokens ?? 0) };
  }
  if (side === 'responses') return { text: body.output?.[0]?.content?.[0]?.text, tokens: body.usage?.total_tokens };
  if (side === 'embed-direct' || side === 'embeddings') {
    return { text: JSON.stringify(body.data?.[0]?.embedding), tokens: body.usage?.total_tokens };
  }
  // The tool answers the upstream's JSON as its result.
  const completion = side === 'tool' ? (body.result ?? {}) : body;
  return { text: completion.choices?.[0]?.message?.content, tokens: completion.usage?.total_tokens };
}
