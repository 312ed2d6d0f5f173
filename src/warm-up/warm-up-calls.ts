import { createHash, randomBytes } from 'node:crypto';
import { chatBody, clientHeaders } from './client-shapes';

/** One request the warm-up sends, and the text its answer must hold to count as served. */
export interface WarmUpCall {
  readonly path: string;
  readonly headers: Record<string, string>;
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
 * to loopback only), no metrics port, no examples; its tenant has a budget and rate limits, its
 * target a price, so the code those turn on is warm for a service that has them.
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
    // What a service's config turns on runs in the warm-up too: a price, a budget, rate limits.
    budgets: { tenants: { [key.entry.tenant]: 1_000_000 } },
    rateLimits: { tenants: { [key.entry.tenant]: { rpm: 10_000_000, tpm: 1_000_000_000 } } },
    llm: {
      prices: { 'openai/warm-up': { inputPerMTokUsd: 1, outputPerMTokUsd: 4 } },
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
 * ingresses over the same route, and a tool. What every request of those kinds runs, run often,
 * with the headers and body fields of many clients (client-shapes.ts), under the warm-up's key.
 */
export function warmUpCalls(n: number, key: WarmUpKey): WarmUpCall[] {
  const question = `Is this call ${n} warm?`;
  const messages = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: question },
  ];
  const headers = clientHeaders(n, `Bearer ${key.key}`);
  const call = (path: string, body: unknown, expect: string): WarmUpCall => ({
    path,
    headers,
    body: JSON.stringify(body),
    expect,
  });
  return [
    call('/v1/chat/completions', chatBody(n, ROUTE, messages, false), '"Warm."'),
    call('/v1/chat/completions', chatBody(n + 1, ROUTE, messages, true), '[DONE]'),
    call('/v1/chat/completions', chatBody(n + 2, CACHED_ROUTE, messages, false), '"Warm."'),
    call('/v1/responses', { model: ROUTE, instructions: SYSTEM, input: question }, '"Warm."'),
    call('/v1/messages', { model: ROUTE, max_tokens: 64, system: SYSTEM, messages: [messages[1]] }, '"Warm."'),
    call(`/v1/tools/${TOOL}/invoke`, { arguments: { n } }, '"result"'),
  ];
}
