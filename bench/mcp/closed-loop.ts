/**
 * Closed-loop callers in this process: `workers` loops, each with one call in flight at a time,
 * for `durationS`. Every side of the MCP benchmark is measured with the same loop, so their
 * ratio is the server's and the protocol's, not two load generators'.
 */
import { percentile } from '../support/stats';

/** One caller: makes one call; resolves true when its answer was the one expected. */
export type Caller = () => Promise<boolean>;

export interface LoopResult {
  /** Calls answered as expected per second. */
  reqPerS: number;
  p50Ms: number;
  p99Ms: number;
  ok: number;
  /** Calls answered otherwise, or that threw. */
  failed: number;
  durationS: number;
}

/** Runs `callers` (one loop each) for `durationS`; the latencies of calls answered as expected. */
export async function runClosedLoop(callers: readonly Caller[], durationS: number): Promise<LoopResult> {
  const latencies: number[] = [];
  let failed = 0;
  const started = performance.now();
  const until = started + durationS * 1_000;
  await Promise.all(
    callers.map(async (callOnce) => {
      while (performance.now() < until) {
        const at = performance.now();
        let good = false;
        try {
          good = await callOnce();
        } catch {
          good = false;
        }
        if (good) latencies.push(performance.now() - at);
        else failed++;
      }
    }),
  );
  const elapsedS = (performance.now() - started) / 1_000;
  latencies.sort((a, b) => a - b);
  return {
    reqPerS: latencies.length / elapsedS,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    ok: latencies.length,
    failed,
    durationS: elapsedS,
  };
}
