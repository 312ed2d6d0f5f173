/**
 * The streaming benchmark's sides, variants and service: what each side's streams are asked of,
 * and the routes the service streams them through.
 */
import type { ApiKey } from '../support/service';
import { MODEL, type SseUpstream } from './sse-upstream';

/**
 * direct: the upstream itself; floor: the least proxy in Node in front of it (./floor-proxy.ts);
 * service: the route, `stream: true`. Each round runs them in this order.
 */
export type Side = 'direct' | 'floor' | 'service';
export const SIDES: readonly Side[] = ['direct', 'floor', 'service'];

/** immediate: the chunks at once; delayed: the first one {@link FIRST_CHUNK_DELAY_MS} after the headers. */
export type Variant = 'immediate' | 'delayed';
export const FIRST_CHUNK_DELAY_MS = 20;

/** A variant at a concurrency: the runs of one table row. */
export interface Scenario {
  variant: Variant;
  concurrency: number;
}

/** The route of each variant, one target each: the same upstream, at its two base URLs. */
export const ROUTES: Record<Variant, string> = { immediate: 'stream', delayed: 'stream-delayed' };
/** The lane both routes run in. */
export const LANE = 'llm';
/** The upstream reads no key; a provider's request carries one all the same. */
const PROVIDER_KEY = 'sk-bench-not-a-real-key';

const baseUrlOf = (upstream: SseUpstream, variant: Variant) =>
  variant === 'immediate' ? upstream.baseUrl : upstream.delayedBaseUrl(FIRST_CHUNK_DELAY_MS);

/**
 * One API-key tenant in the normal pool, a route per variant (cache off: every stream reaches the
 * upstream), in a lane and a pool too big to limit; egress to loopback only; no rate limit or
 * budget.
 */
export function serviceConfig(upstream: SseUpstream, key: ApiKey, concurrency: number) {
  const route = (variant: Variant) => ({
    lane: LANE,
    targets: [{ provider: 'openai', model: MODEL, baseUrl: baseUrlOf(upstream, variant), apiKey: PROVIDER_KEY }],
    cache: false,
  });
  return {
    auth: { allowAnonymous: false, apiKeys: [key.entry] },
    lanes: { [LANE]: { concurrency: 256, queueCapacity: 1024 } },
    containment: {
      pools: { normalMaxConcurrency: Math.max(64, 4 * concurrency) },
      egress: { allowHosts: ['127.0.0.1'], allowPrivateCidrs: ['127.0.0.0/8'] },
    },
    llm: { routes: { [ROUTES.immediate]: route('immediate'), [ROUTES.delayed]: route('delayed') } },
  };
}

/** Where a side's streams go and how each is asked for. */
export interface Endpoint {
  url: string;
  headers: Record<string, string>;
  body(index: number): string;
}

/** Where the proxy sides listen (`http://host:port`); a run without the floor has none for it. */
export interface ProxyBases {
  service: string;
  floor?: string;
}

/**
 * The same streamed chat request from every side (the client asks for the usage chunk, as the
 * service always does of its provider), each with a question of its own; the side names itself
 * in `user`, so the upstream counts each side's streams apart. The floor passes the direct
 * side's request on as it is, at the same path.
 */
export function endpoint(side: Side, variant: Variant, upstream: SseUpstream, bases: ProxyBases, key: ApiKey) {
  const body = (model: string) => (index: number) =>
    JSON.stringify({
      model,
      messages: [
        { role: 'system', content: 'You are a counting assistant.' },
        { role: 'user', content: `Count from 0 to 199, one word a number (request ${index}).` },
      ],
      stream: true,
      stream_options: { include_usage: true },
      user: userOf(side),
    });
  if (side === 'service') {
    return { url: `${bases.service}/v1/chat/completions`, headers: key.headers, body: body(ROUTES[variant]) };
  }
  const direct = new URL(`${baseUrlOf(upstream, variant)}/chat/completions`);
  if (side === 'floor' && bases.floor === undefined) throw new Error('the floor side needs the floor proxy');
  return {
    url: side === 'floor' ? `${bases.floor}${direct.pathname}` : direct.href,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${PROVIDER_KEY}` },
    body: body(MODEL),
  };
}

export function userOf(side: Side): string {
  return `bench-${side}`;
}
