/** The isolation benchmark's service: its lanes and tools, with lanes and with one shared lane. */
import type { UpstreamServer } from '../support/upstream-server';

export const SLOW = { concurrency: 8, queueCapacity: 16 };
export const FAST = { concurrency: 16, queueCapacity: 64 };
export const OVERFLOW_CALLERS = 16;
/** Callers of the slow tool in phase B: C running, Q waiting, and the overflow. */
export const SLOW_CALLERS = SLOW.concurrency + SLOW.queueCapacity + OVERFLOW_CALLERS;
export const SAMPLE_EVERY_MS = 100;
export const TARGET_P99_RATIO = 1.2;

export interface Configuration {
  name: 'lanes' | 'shared';
  fastTool: string;
  slowTool: string;
  /** The lane the slow tool runs in, and what saturating it means there. */
  slowLane: string;
  slowLaneConcurrency: number;
}

export const CONFIGURATIONS: Configuration[] = [
  {
    name: 'lanes',
    fastTool: 'fast',
    slowTool: 'slow',
    slowLane: 'slow',
    slowLaneConcurrency: SLOW.concurrency,
  },
  {
    name: 'shared',
    fastTool: 'shared_fast',
    slowTool: 'shared_slow',
    slowLane: 'shared',
    slowLaneConcurrency: SLOW.concurrency + FAST.concurrency,
  },
];

export function config(upstream: UpstreamServer, slowMs: number, key: { sha256: string; tenant: string }) {
  const httpTool = (lane: string, url: string) => ({
    lane,
    kind: 'http',
    url,
    timeoutMs: 60_000,
    retry: { maxAttempts: 1 },
    // The slow calls cut short when their callers leave must not open a breaker.
    breaker: { volumeThreshold: 100_000, errorThresholdPercentage: 100 },
  });
  // Jittered, so the slow calls do not all end at once in waves.
  const slowUrl = upstream.url(`/slow?ms=${slowMs}&jitter=0.5`);
  return {
    server: { shutdownDrainMs: 1_000 },
    auth: { allowAnonymous: false, apiKeys: [key] },
    lanes: {
      slow: { ...SLOW, queueTtlMs: 60_000 },
      fast: FAST,
      shared: {
        concurrency: SLOW.concurrency + FAST.concurrency,
        queueCapacity: SLOW.queueCapacity + FAST.queueCapacity,
        queueTtlMs: 60_000,
      },
    },
    tools: {
      slow: httpTool('slow', slowUrl),
      fast: httpTool('fast', upstream.url('/fast')),
      shared_slow: httpTool('shared', slowUrl),
      shared_fast: httpTool('shared', upstream.url('/fast')),
    },
    containment: {
      // Above the sum of every lane's C: the outbound pool must not be a shared limit itself.
      pools: { normalMaxConcurrency: 256, timeoutMs: 60_000 },
      egress: { allowHosts: ['127.0.0.1'], allowPrivateCidrs: ['127.0.0.1/32'] },
    },
  };
}
