/**
 * The scale benchmark's calls over HTTP: a side is one server (the service's app with N
 * tenants, or the service with L lanes) and how its n-th call is made; a run is autocannon on it,
 * with the server's CPU time per answered call. Successive calls come from successive tenants,
 * or go to successive tools, counted on across runs, so a side's runs go round all of them.
 */
import { runLoad } from '../support/load';
import type { LoadResult } from '../support/load';
import { median, pairedRatio, summary } from '../support/stats';

const BODY = JSON.stringify({ arguments: {} });

/** `1 tenant`, `1,000 tenants`. */
export const counted = (count: number, noun: string): string =>
  `${count.toLocaleString('en')} ${noun}${count === 1 ? '' : 's'}`;

export interface Side {
  /** `memory, 1000 tenants`, `50 lanes`... */
  readonly name: string;
  /** What varies: tenants or lanes. */
  readonly count: number;
  /** `http://127.0.0.1:<port>` */
  readonly base: string;
  /** The n-th call's path and headers. */
  request(n: number): { path: string; headers: Record<string, string> };
  /** The server process's CPU time so far, µs. */
  cpuUs(): Promise<number>;
}

export interface CallRun {
  side: string;
  round: number;
  reqPerS: number;
  p50Ms: number;
  p99Ms: number;
  /** 2xx answers. */
  ok: number;
  /** Answers other than 2xx, and connection errors. */
  failed: number;
  statuses: Record<string, number>;
  /** The server's CPU time per 2xx answer, µs. */
  cpuUsPerCall: number;
  durationS: number;
}

/** Calls made so far, by side: each run goes on from where the last one stopped. */
const made = new Map<string, number>();

/**
 * Calls `side` with `connections` connections for `durationS` seconds, or until `amount` calls
 * were made (at most `durationS` then). The calls are the side's next ones.
 */
export async function runCalls(
  side: Side,
  round: number,
  options: { connections: number; durationS: number; amount?: number },
): Promise<CallRun> {
  const first = made.get(side.name) ?? 0;
  let sent = 0;
  const before = await side.cpuUs();
  const result: LoadResult = await runLoad({
    url: `${side.base}${side.request(0).path}`,
    connections: options.connections,
    durationS: options.durationS,
    amount: options.amount,
    body: BODY,
    perRequest: () => side.request(first + sent++),
  });
  const after = await side.cpuUs();
  made.set(side.name, first + sent);
  return {
    side: side.name,
    round,
    reqPerS: result.reqPerS,
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    ok: result.ok,
    failed: result.non2xx + result.errors,
    statuses: result.statuses,
    cpuUsPerCall: (after - before) / Math.max(1, result.ok),
    durationS: result.durationS,
  };
}

/** One side's runs: median (min-max) of each figure. */
export function summariseCalls(runs: readonly CallRun[]) {
  return {
    cpuUsPerCall: summary(runs.map((run) => run.cpuUsPerCall)),
    reqPerS: summary(runs.map((run) => run.reqPerS)),
    p50Ms: summary(runs.map((run) => run.p50Ms)),
    p99Ms: summary(runs.map((run) => run.p99Ms)),
    ok: runs.reduce((sum, run) => sum + run.ok, 0),
    failed: runs.reduce((sum, run) => sum + run.failed, 0),
  };
}

export type CallsSummary = ReturnType<typeof summariseCalls>;

/** `side` against `baseline`, round by round: CPU per call and req/s (median, min-max), and of the medians. */
export function compareCalls(baseline: readonly CallRun[], side: readonly CallRun[]) {
  const pick = (runs: readonly CallRun[], figure: 'cpuUsPerCall' | 'reqPerS') => runs.map((run) => run[figure]);
  return {
    cpuUsPerCall: pairedRatio(pick(baseline, 'cpuUsPerCall'), pick(side, 'cpuUsPerCall')),
    reqPerS: pairedRatio(pick(baseline, 'reqPerS'), pick(side, 'reqPerS')),
    cpuOfMedians: median(pick(side, 'cpuUsPerCall')) / median(pick(baseline, 'cpuUsPerCall')),
  };
}
