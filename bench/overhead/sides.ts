/** What the overhead benchmark compares: its sides, the comparisons and their targets, the service's config. */
import { POLICY_LANE } from '../support/bare-app';
import type { ApiKey } from '../support/service';

export const TOOL_LANE = 'tools';
export const ECHO_COST_USD = 0.000001;

export type Side = 'bare' | 'memory' | 'redis' | 'interceptor' | 'policies';

export const SIDES: Record<Side, string> = {
  bare: 'bare Nest + Fastify route',
  memory: 'echo, full pipeline, memory store',
  redis: 'echo, full pipeline, Redis store',
  interceptor: 'route + one no-op interceptor',
  policies: 'route + @Bulkhead + @CircuitBreaker',
};

export interface Comparison {
  name: 'pipeline' | 'route-policies' | 'redis';
  a: Side;
  b: Side;
  /** B/A of req/s must be at least this. */
  target: number;
}

export const COMPARISONS: Comparison[] = [
  { name: 'pipeline', a: 'bare', b: 'memory', target: 0.7 },
  { name: 'route-policies', a: 'interceptor', b: 'policies', target: 0.9 },
  { name: 'redis', a: 'memory', b: 'redis', target: 0.6 },
];

/** The service's config: one tenant with every step of the pipeline configured, on `store`. */
export function config(key: ApiKey, store: object) {
  return {
    server: { shutdownDrainMs: 1_000 },
    auth: { allowAnonymous: false, apiKeys: [key.entry] },
    store,
    lanes: {
      [TOOL_LANE]: { concurrency: 64, queueCapacity: 64 },
      [POLICY_LANE]: { concurrency: 64, queueCapacity: 64 },
    },
    tools: {
      echo: { kind: 'builtin', builtin: 'echo', lane: TOOL_LANE, costUsd: ECHO_COST_USD, tokens: 1 },
    },
    // Far above what a run can use: every call is decided, none refused.
    rateLimits: { default: { rpm: 10_000_000, tpm: 1_000_000_000 } },
    budgets: { defaultUsd: 1_000 },
  };
}
