/** The isolation benchmark's runs: per phase and configuration, their checks and table rows. */
import type { LoadResult } from '../support/load';
import { fixed, range, type Stat } from '../support/report';
import { median, pairedRatio, summary } from '../support/stats';
import type { LaneSamples } from './lane-samples';
import { type Configuration, CONFIGURATIONS } from './setup';

export interface Run extends LoadResult {
  configuration: Configuration['name'];
  pair: number;
  phase: 'A' | 'B';
  lanes: LaneSamples;
  /** The most slow calls at the upstream at once during the run. */
  slowPeakAtUpstream: number;
  /** B: slow calls refused (`queue_full`) during the run, per second. */
  slowRefusedPerS?: number;
  /** B: slow calls that got an answer other than 200 or 503 during the run. */
  slowOtherAnswers?: number;
  /** CPU each process used during the run, in cores (CPU seconds per second). */
  cpuCores: Cpu;
}

export interface Cpu {
  service: number;
  /** This process: autocannon and the lane sampler. */
  loadGenerator: number;
  upstream: number;
  /** The slow tool's callers (idle in phase A). */
  callers: number;
}

export const PROCESSES = ['service', 'loadGenerator', 'upstream', 'callers'] as const;

export function cores(before: Cpu, after: Cpu, seconds: number): Cpu {
  const used = (name: keyof Cpu) => (after[name] - before[name]) / seconds;
  return {
    service: used('service'),
    loadGenerator: used('loadGenerator'),
    upstream: used('upstream'),
    callers: used('callers'),
  };
}

export const cpuText = (cpu: Cpu) =>
  `${PROCESSES.map((name) => `${name} ${fixed(cpu[name])}`).join(', ')}, total ${fixed(PROCESSES.reduce((sum, name) => sum + cpu[name], 0))}`;

export function summarise(configuration: Configuration['name'], a: Run[], b: Run[]) {
  const stat = (series: Run[], pick: (run: Run) => number) => summary(series.map(pick));
  const phase = (series: Run[]) => ({
    p50Ms: stat(series, (run) => run.p50Ms),
    p99Ms: stat(series, (run) => run.p99Ms),
    reqPerS: stat(series, (run) => run.reqPerS),
  });
  const A = phase(a);
  const B = phase(b);
  const paired = (pick: (run: Run) => number) => pairedRatio(a.map(pick), b.map(pick));
  return {
    configuration,
    A,
    B,
    ratios: { p50Ms: paired((r) => r.p50Ms), p99Ms: paired((r) => r.p99Ms), reqPerS: paired((r) => r.reqPerS) },
    ofMedians: {
      p50Ms: B.p50Ms.median / A.p50Ms.median,
      p99Ms: B.p99Ms.median / A.p99Ms.median,
      reqPerS: B.reqPerS.median / A.reqPerS.median,
    },
    slowRefusedPerS: stat(b, (run) => run.slowRefusedPerS ?? 0),
    cpuCores: { A: medianCpu(a), B: medianCpu(b) },
    failedInB: b.reduce((sum, run) => sum + run.non2xx + run.errors, 0),
  };
}

function medianCpu(runs: Run[]): Cpu {
  const of = (name: keyof Cpu) => median(runs.map((run) => run.cpuCores[name]));
  return {
    service: of('service'),
    loadGenerator: of('loadGenerator'),
    upstream: of('upstream'),
    callers: of('callers'),
  };
}

export function check(runs: Run[]) {
  const problems: string[] = [];
  for (const run of runs) {
    const at = `${run.configuration} pair ${run.pair} ${run.phase}`;
    const limit = CONFIGURATIONS.find((c) => c.name === run.configuration)!.slowLaneConcurrency;
    // With lanes every fast call succeeds; in the shared lane B, failures are the finding.
    if ((run.configuration === 'lanes' || run.phase === 'A') && run.non2xx + run.errors > 0) {
      problems.push(`${at}: ${run.non2xx} non-2xx and ${run.errors} errors among the fast calls`);
    }
    if (run.ok === 0 && (run.configuration === 'lanes' || run.phase === 'A'))
      problems.push(`${at}: no fast call succeeded`);
    if (run.phase === 'A' && run.slowPeakAtUpstream !== 0)
      problems.push(`${at}: slow calls at the upstream in phase A`);
    if (run.phase === 'B') {
      if (run.slowPeakAtUpstream !== limit) {
        problems.push(`${at}: the slow upstream peaked at ${run.slowPeakAtUpstream} calls, not the lane's C ${limit}`);
      }
      if (run.lanes.slowActive.median !== limit) problems.push(`${at}: the slow lane was not kept full`);
      if (run.configuration === 'lanes' && !(run.slowRefusedPerS! > 0))
        problems.push(`${at}: no slow call was refused`);
      if (run.slowOtherAnswers) problems.push(`${at}: ${run.slowOtherAnswers} slow calls answered other than 200/503`);
    }
  }
  return { problems };
}

export function row(configuration: string, phase: string, figures: { p50Ms: Stat; p99Ms: Stat; reqPerS: Stat }) {
  return {
    configuration,
    phase,
    'p50 ms': range(figures.p50Ms),
    'p99 ms': range(figures.p99Ms),
    'req/s': range(figures.reqPerS, 0),
    'failed calls B': '',
  };
}
