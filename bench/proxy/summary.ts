/** The proxy benchmark's runs, summarised per target and compared pairwise, and its checks. */
import type { LoadResult } from '../support/load';
import type { Stat } from '../support/report';
import { median, pairedRatio, spread } from '../support/stats';

export type Target = 'direct' | 'service' | 'portkey';

export interface Cpu {
  service: number;
  portkey: number;
  upstream: number;
  /** This process: autocannon. */
  loadGenerator: number;
}

export interface Run extends LoadResult {
  round: number;
  target: Target;
  /** Requests the upstream's `/fast` received during the run. */
  upstreamRequests: number;
  /** CPU each process used during the run, in cores. */
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
    /** CPU time each process spent per 2xx call, in µs (median over the runs). */
    cpuUsPerCall: {
      service: perCall('service'),
      portkey: perCall('portkey'),
      upstream: perCall('upstream'),
      loadGenerator: perCall('loadGenerator'),
    },
    failed: series.reduce((sum, run) => sum + run.non2xx + run.errors, 0),
  };
}

/** x / y per round (runs of the same round) and of the medians. */
export function compare(x: Target, xs: Run[], y: Target, ys: Run[]) {
  const paired = (pick: (run: Run) => number) => pairedRatio(ys.map(pick), xs.map(pick));
  const ofMedians = (pick: (run: Run) => number) => median(xs.map(pick)) / median(ys.map(pick));
  return {
    name: `${x} / ${y}`,
    perRound: { p50Ms: paired((r) => r.p50Ms), p99Ms: paired((r) => r.p99Ms), reqPerS: paired((r) => r.reqPerS) },
    ofMedians: {
      p50Ms: ofMedians((r) => r.p50Ms),
      p99Ms: ofMedians((r) => r.p99Ms),
      reqPerS: ofMedians((r) => r.reqPerS),
    },
  };
}

export function check(runs: Run[], connections: number) {
  const problems: string[] = [];
  const warnings: string[] = [];
  for (const run of runs) {
    const at = `round ${run.round} ${run.target}`;
    const failed = run.non2xx + run.errors;
    if (run.ok === 0) problems.push(`${at}: no call succeeded`);
    if (failed > 0) {
      const text = `${at}: ${run.non2xx} non-2xx (${JSON.stringify(run.statuses)}) and ${run.errors} errors`;
      // Portkey is the comparison, not the subject: its failures are reported, not fatal.
      (run.target === 'portkey' ? warnings : problems).push(text);
    }
    // Every answered call reached the upstream once; the calls cut at the end of the run (at
    // most one per connection) may have too.
    if (run.upstreamRequests < run.ok || run.upstreamRequests > run.ok + failed + connections) {
      problems.push(`${at}: ${run.ok} calls answered but ${run.upstreamRequests} reached the upstream`);
    }
  }
  return { problems, warnings };
}
