/** The overhead benchmark's runs, summarised per comparison, and as table rows. */
import type { PromText } from '../../test/support/prom-text';
import type { LoadResult } from '../support/load';
import { range, type Stat } from '../support/report';
import { pairedRatio, summary } from '../support/stats';
import type { Comparison, Side } from './sides';

export interface Run extends LoadResult {
  side: Side;
  round: number;
  /** The server's CPU time per 2xx answer, in µs. */
  serverCpuUsPerCall: number;
  /** CPU used during the run, in cores: the server, and this process (autocannon). */
  serverCores: number;
  loadGeneratorCores: number;
}

export function summarise(comparison: Comparison, a: Run[], b: Run[]) {
  const stat = (series: Run[], pick: (run: Run) => number) => summary(series.map(pick));
  const side = (series: Run[]) => ({
    reqPerS: stat(series, (run) => run.reqPerS),
    p50Ms: stat(series, (run) => run.p50Ms),
    p99Ms: stat(series, (run) => run.p99Ms),
    serverCpuUsPerCall: stat(series, (run) => run.serverCpuUsPerCall),
  });
  const A = side(a);
  const B = side(b);
  const paired = (pick: (run: Run) => number) => pairedRatio(a.map(pick), b.map(pick));
  const ratios = {
    reqPerS: paired((run) => run.reqPerS),
    p50Ms: paired((run) => run.p50Ms),
    p99Ms: paired((run) => run.p99Ms),
    serverCpuUsPerCall: paired((run) => run.serverCpuUsPerCall),
  };
  return {
    comparison,
    A,
    B,
    ratios,
    ofMedians: {
      reqPerS: B.reqPerS.median / A.reqPerS.median,
      p50Ms: B.p50Ms.median / A.p50Ms.median,
      p99Ms: B.p99Ms.median / A.p99Ms.median,
      serverCpuUsPerCall: B.serverCpuUsPerCall.median / A.serverCpuUsPerCall.median,
    },
    met: ratios.reqPerS.median >= comparison.target,
  };
}

/** The sum of the samples of `name` whose labels include `labels`. */
export function sumOf(metrics: PromText, name: string, labels: Record<string, string>): number {
  return metrics.samples
    .filter(
      (sample) =>
        sample.name === name && Object.entries(labels).every(([label, value]) => sample.labels[label] === value),
    )
    .reduce((sum, sample) => sum + sample.value, 0);
}

export function row(
  comparison: string,
  side: string,
  figures: { reqPerS: Stat; p50Ms: Stat; p99Ms: Stat; serverCpuUsPerCall: Stat },
) {
  return {
    comparison,
    side,
    'req/s': range(figures.reqPerS, 0),
    'p50 ms': range(figures.p50Ms),
    'p99 ms': range(figures.p99Ms),
    'CPU µs/call': range(figures.serverCpuUsPerCall, 1),
  };
}
