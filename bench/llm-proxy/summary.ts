/** The LLM proxy benchmark's runs, summarised per side and compared per round, and its checks. */
import type { Stat } from '../support/report';
import { median, pairedRatio, spread } from '../support/stats';
import type { CheckedLoadResult } from './checked-load';

/**
 * direct: the upstream itself; service: the LLM route, cache off; cached: the LLM route
 * answering from its exact cache; tool: the service's http tool forwarding the same request;
 * portkey: Portkey's gateway.
 */
export type Side = 'direct' | 'service' | 'cached' | 'tool' | 'portkey';
export const SIDES: readonly Side[] = ['direct', 'service', 'cached', 'tool', 'portkey'];

/** CPU of each process, in cores (during a run) or seconds (a reading). */
export interface Cpu {
  service: number;
  portkey: number;
  upstream: number;
  /** This process: autocannon. */
  loadGenerator: number;
}

export interface Run extends CheckedLoadResult {
  round: number;
  side: Side;
  /** Requests of this side the upstream answered during the run (by their `user`). */
  upstreamRequests: number;
  /** Of those, the ones it refused (400): a request not as a provider would get it. */
  upstreamRejected: number;
  cpuCores: Cpu;
}

export function summarise(series: Run[]) {
  const stat = (pick: (run: Run) => number): Stat => {
    const values = series.map(pick);
    return { median: median(values), ...spread(values) };
  };
  const perCall = (name: keyof Cpu) => median(series.map((run) => (run.cpuCores[name] * 1e6) / run.reqPerS));
  return {
    p50Ms: stat((run) => run.p50Ms),
    p99Ms: stat((run) => run.p99Ms),
    reqPerS: stat((run) => run.reqPerS),
    /** CPU time each process spent per checked 2xx answer, in µs (median over the runs). */
    cpuUsPerCall: {
      service: perCall('service'),
      portkey: perCall('portkey'),
      upstream: perCall('upstream'),
      loadGenerator: perCall('loadGenerator'),
    },
    failed: series.reduce((sum, run) => sum + run.non2xx + run.errors + run.wrong2xx, 0),
  };
}

export type Summary = ReturnType<typeof summarise>;

/** x / y per round (the runs of the same round) and of the medians. */
export function compare(x: Side, xs: Run[], y: Side, ys: Run[]) {
  const paired = (pick: (run: Run) => number) => pairedRatio(ys.map(pick), xs.map(pick));
  const ofMedians = (pick: (run: Run) => number) => median(xs.map(pick)) / median(ys.map(pick));
  const cpu = (side: Side) => {
    const server = side === 'direct' ? 'upstream' : side === 'portkey' ? 'portkey' : 'service';
    return (run: Run) => (run.cpuCores[server] * 1e6) / run.reqPerS;
  };
  return {
    name: `${x} / ${y}`,
    perRound: { p50Ms: paired((r) => r.p50Ms), p99Ms: paired((r) => r.p99Ms), reqPerS: paired((r) => r.reqPerS) },
    ofMedians: {
      p50Ms: ofMedians((r) => r.p50Ms),
      p99Ms: ofMedians((r) => r.p99Ms),
      reqPerS: ofMedians((r) => r.reqPerS),
    },
    /** The CPU per call of x's server over y's (the upstream's for direct), of the medians. */
    serverCpu: median(xs.map(cpu(x))) / median(ys.map(cpu(y))),
  };
}

export type Comparison = ReturnType<typeof compare>;

/**
 * Every answer of every run 200 with the expected content; every answered call of a proxy
 * reached the upstream once, as a provider would take it; a cache hit reached it never.
 */
export function check(runs: Run[], connections: number): string[] {
  const problems: string[] = [];
  for (const run of runs) {
    const at = `round ${run.round} ${run.side}`;
    const failed = run.non2xx + run.errors + run.wrong2xx;
    if (run.ok === 0) problems.push(`${at}: no call succeeded`);
    if (failed > 0) {
      problems.push(
        `${at}: ${run.non2xx} non-2xx (${JSON.stringify(run.statuses)}), ${run.wrong2xx} 2xx with other content, ` +
          `${run.errors} errors${run.firstMismatch ? `; first unexpected body: ${run.firstMismatch}` : ''}`,
      );
    }
    if (run.upstreamRejected > 0) problems.push(`${at}: the upstream refused ${run.upstreamRejected} requests`);
    if (run.side === 'cached') {
      if (run.upstreamRequests > 0) problems.push(`${at}: ${run.upstreamRequests} cache hits reached the upstream`);
    } else if (run.upstreamRequests < run.ok || run.upstreamRequests > run.ok + failed + connections) {
      // The calls cut at the end of a run (at most one per connection) may have reached it too.
      problems.push(`${at}: ${run.ok} calls answered but ${run.upstreamRequests} reached the upstream`);
    }
  }
  return problems;
}
