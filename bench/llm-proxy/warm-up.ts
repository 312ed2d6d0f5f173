/**
 * How soon the chat route is warm: a service process started for this alone, its first requests
 * timed one at a time in blocks (the sequential method), each block's p50 less direct's in a
 * block run just before it. The later sequential rounds give the warm figure it settles at.
 */
import { printTable } from '../support/report';
import { percentile } from '../support/stats';
import { timeSequential } from './sequential';
import type { Endpoint } from './sides';

export interface WarmUpBlock {
  /** Requests the fresh service had answered by the end of this block. */
  calls: number;
  addedP50Ms: number;
  /** Answers that were not 200 with every expected part. */
  wrong: number;
}

/** `blocks` blocks of `size` requests on a service that has answered none yet (its probe aside). */
export async function warmUpCurve(
  fresh: Endpoint,
  direct: Endpoint,
  blocks: number,
  size: number,
): Promise<WarmUpBlock[]> {
  const curve: WarmUpBlock[] = [];
  for (let block = 1; block <= blocks; block++) {
    const baseline = await timeSequential(direct, size);
    const measured = await timeSequential(fresh, size);
    const p50 = (times: number[]) =>
      percentile(
        [...times].sort((a, b) => a - b),
        50,
      );
    curve.push({
      calls: block * size,
      addedP50Ms: p50(measured.times) - p50(baseline.times),
      wrong: measured.wrong,
    });
  }
  return curve;
}

/**
 * The first block from which every later one stays within 1.2x of `warmAddedMs` (or 0.05 ms of
 * it, below which the rounds' own noise is): how many requests the route took to warm up.
 * Undefined if the curve never got there.
 */
export function warmWithin(curve: readonly WarmUpBlock[], warmAddedMs: number): number | undefined {
  const warm = (block: WarmUpBlock) => block.addedP50Ms <= Math.max(1.2 * warmAddedMs, warmAddedMs + 0.05);
  const from = curve.findIndex((_, index) => curve.slice(index).every(warm));
  return from < 0 ? undefined : curve[from].calls;
}

export function printWarmUp(curve: readonly WarmUpBlock[], warmAddedMs: number): void {
  const within = warmWithin(curve, warmAddedMs);
  const verdict =
    within === undefined ? `not warm within ${curve.at(-1)?.calls ?? 0} requests` : `warm within ${within} requests`;
  printTable(
    `warm-up: a fresh service's chat route, one request at a time, p50 ms over direct per block; warm (the sequential rounds) ${warmAddedMs.toFixed(3)}: ${verdict}`,
    curve.map((block) => ({ 'requests so far': block.calls, 'p50 added': block.addedP50Ms.toFixed(3) })),
  );
}
