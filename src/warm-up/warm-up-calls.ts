import { createHash, randomBytes } from 'node:crypto';

/** One request the warm-up sends, and the text its answer must hold to count as served. */
export interface WarmUpCall {
  readonly path: string;
  readonly body: string;
  readonly expect: string;
}

/** The warm-up app's own key and tenant: made for it, known nowhere else, gone with it. */
export interface WarmUpKey {
  readonly key: string;
  readonly entry: { sha256: string; tenant: string };
}

export function warmUpKey(): WarmUpKey {
  const key = `warm-up-${randomBytes(16).toString('hex')}`;
  return { key, entry: { sha256: createHash('sha256').update(key).digest('hex'), tenant: 'warm-up' } };
}

const LANE = 'llm';
const ROUTE = 'warm';
const CACHED_ROUTE = 'warm-cached';
const TOOL = 'warm-echo';

/**
 * The service's config for the warm-up app: the same code as the service's (every module, the
 * Fastify adapter), on its own memory store, its own key, a chat route (and a cached one) whose
 * `openai` target is the loopback model, a builtin tool, nothing it could send elsewhere (egress
 * to loopback only), no metrics port, no examples.
 */
export function warmUpDocument(key: WarmUpKey, modelBaseUrl: string): Record<string, unknown> {
  const target = { provider: 'openai', model: 'warm-up', baseUrl: modelBaseUrl, apiKey: 'warm-up' };
  return {
    server: { port: 0, host: '127.0.0.1', logLevel: 'error', warmUpMs: 0 },
    auth: { allowAnonymous: false, apiKeys: [key.entry] },
    store: { kind: 'memory' },
    lanes: { [LANE]: { concurrency: 64, queueCapacity: 64 } },
    tools: { [TOOL]: { lane: LANE, kind: 'builtin', builtin: 'echo' } },
    containment: { egress: { allowHosts: ['127.0.0.1'], allowPrivateCidrs: ['127.0.0.0/8'] } },
    llm: {
      routes: {
        [ROUTE]: { lane: LANE, targets: [target], cache: false },
        [CACHED_ROUTE]: { lane: LANE, targets: [target], cache: true },
      },
    },
    examples: false,
  };
}

const SYSTEM = 'You are a helpful assistant. Answer in one word.';

/**
 * The calls the warm-up sends in turn, the `n`th of each: the chat route whole and streamed, a
 * cached route (each call another question: a miss and a store), the Responses and Messages
 * ingresses over the same route, and a tool. What every request of those kinds runs, run often.
 */
export function warmUpCalls(n: number): WarmUpCall[] {
  const question = `Is this call ${n} warm?`;
  const messages = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: question },
  ];
  return [
    { path: '/v1/chat/completions', body: JSON.stringify({ model: ROUTE, messages }), expect: '"Warm."' },
    {
      path: '/v1/chat/completions',
      body: JSON.stringify({ model: ROUTE, messages, stream: true }),
      expect: '[DONE]',
    },
    { path: '/v1/chat/completions', body: JSON.stringify({ model: CACHED_ROUTE, messages }), expect: '"Warm."' },
    {
      path: '/v1/responses',
      body: JSON.stringify({ model: ROUTE, instructions: SYSTEM, input: question }),
      expect: '"Warm."',
    },
    {
      path: '/v1/messages',
      body: JSON.stringify({ model: ROUTE, max_tokens: 64, system: SYSTEM, messages: [messages[1]] }),
      expect: '"Warm."',
    },
    { path: `/v1/tools/${TOOL}/invoke`, body: JSON.stringify({ arguments: { n } }), expect: '"result"' },
  ];
}
