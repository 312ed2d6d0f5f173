/** The hedging benchmark's service and requests: one route with one target, hedging or not. */
import type { ApiKey } from '../support/service';
import { MODEL, type TailUpstream } from './tail-upstream';

export const ROUTE = 'chat';
export const TARGET_LABEL = `openai/${MODEL}`;
/** The lane the route runs in. */
export const LANE = 'llm';
/** The upstream reads no key; a provider's request carries one all the same. */
const PROVIDER_KEY = 'sk-bench-not-a-real-key';

/**
 * One API-key tenant in the normal pool; the route `chat` with its one target at the upstream,
 * hedging after `hedgeAfterMs` (0: never), its cache off (every request reaches the upstream).
 * The lane and the pool are far bigger than `clients` and their hedges; no rate limit or budget;
 * egress to loopback only.
 */
export function serviceConfig(upstream: TailUpstream, key: ApiKey, clients: number, hedgeAfterMs: number) {
  return {
    auth: { allowAnonymous: false, apiKeys: [key.entry] },
    lanes: { [LANE]: { concurrency: 256, queueCapacity: 1024 } },
    containment: {
      pools: { normalMaxConcurrency: Math.max(64, 4 * clients) },
      egress: { allowHosts: ['127.0.0.1'], allowPrivateCidrs: ['127.0.0.0/8'] },
    },
    llm: {
      routes: {
        [ROUTE]: {
          lane: LANE,
          targets: [{ provider: 'openai', model: MODEL, baseUrl: upstream.baseUrl, apiKey: PROVIDER_KEY }],
          cache: false,
          hedgeAfterMs,
          maxHedges: 1,
          timeoutMs: 10_000,
        },
      },
    },
  };
}

/** Request `index` of a run: its own question, so no two requests of the run are the same. */
export function requestBody(run: string, index: number): string {
  return JSON.stringify({
    model: ROUTE,
    messages: [
      { role: 'system', content: 'You are a terse assistant.' },
      { role: 'user', content: `Question ${index} of the ${run} run: say hello.` },
    ],
    user: `bench-${run}`,
  });
}
