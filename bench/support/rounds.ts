/**
 * Benchmarks that run sides in rounds against one upstream (A B C A B C ...), as
 * bench/proxy.ts and bench/llm-proxy.ts do: the CPU each process used during a run, each
 * side's runs summarised, and two sides compared round by round.
 */
import { cpuSecondsOf, ownCpuSeconds } from './cpu';
import type { LoadResult } from './load';
import type { Child } from './processes';
import { median, pairedRatio, summary } from './stats';

/** CPU of each process, in cores (during a run) or seconds (a reading). */
export interface Cpu {
  service: number;
  portkey: number;
  upstream: number;
  /** This process: autocannon. */
  loadGenerator: number;
  /** A hand-written forwarder, where a benchmark runs one (bench/proxy/forwarder.ts). */
  forwarder?: number;
}

/** One side's measured run in one round, over its kind of load result. */
export type RoundRun<Result extends LoadResult = LoadResult> = Result & {
  round: number;
  /** Requests of this side the upstream received during the run. */
  upstreamRequests: number;
  /** CPU each process used during the run, in cores. */
  cpuCores: Cpu;
};

/** A run's failed calls: not 2xx, a connection error, or (a checked run) a 2xx with the wrong body. */
export function failedCalls(run: LoadResult): number {
  return run.non2xx + run.errors + (run.wrong2xx ?? 0);
}

/** A process a benchmark started (the service, the upstream, Portkey), by its handle. */
interface Started {
  child?: Child;
}

/**
 * Reads the CPU seconds so far of the service, the upstream, Portkey (NaN while it is left
 * out, `available` false), the forwarder if there is one, and this process.
 */
export function cpuMeter(of: {
  service: Started;
  upstream: Started;
  portkey: Started & { info: { available: boolean } };
  forwarder?: Started;
}): () => Cpu {
  const pid = (started: Started) => started.child?.process.pid;
  const forwarder = of.forwarder;
  return () => ({
    service: cpuSecondsOf(pid(of.service)),
    portkey: of.portkey.info.available ? cpuSecondsOf(pid(of.portkey)) : Number.NaN,
    upstream: cpuSecondsOf(pid(of.upstream)),
    loadGenerator: ownCpuSeconds(),
    ...(forwarder && { forwarder: cpuSecondsOf(pid(forwarder)) }),
  });
}

/** Runs `load`, reading the CPU before and after: what each process used during it, in cores. */
export async function withCpu<Result extends LoadResult>(
  cpuNow: () => Cpu,
  load: () => Promise<Result>,
): Promise<{ result: Result; cpuCores: Cpu }> {
  const before = cpuNow();
  const result = await load();
  const after = cpuNow();
  const used = (name: keyof Cpu) => (after[name]! - before[name]!) / result.durationS;
  return {
    result,
    cpuCores: {
      service: used('service'),
      portkey: used('portkey'),
      upstream: used('upstream'),
      loadGenerator: used('loadGenerator'),
      ...(before.forwarder !== undefined && { forwarder: used('forwarder') }),
    },
  };
}

/** `measure(side, round)` for every side in turn, round after round. */
export async function inRounds<Side, Run>(
  rounds: number,
  sides: readonly Side[],
  measure: (side: Side, round: number) => Promise<Run>,
): Promise<Run[]> {
  const runs: Run[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const side of sides) runs.push(await measure(side, round));
  }
  return runs;
}

/** One side's runs: median (min-max) of each figure, and the CPU each process spent per call. */
export function summariseRuns(series: readonly RoundRun[]) {
  const perCall = (name: keyof Cpu) => median(series.map((run) => (run.cpuCores[name]! * 1e6) / run.reqPerS));
  const withForwarder = series.some((run) => run.cpuCores.forwarder !== undefined);
  return {
    p50Ms: summary(series.map((run) => run.p50Ms)),
    p99Ms: summary(series.map((run) => run.p99Ms)),
    reqPerS: summary(series.map((run) => run.reqPerS)),
    /** CPU time each process spent per counted 2xx answer, in µs (median over the runs). */
    cpuUsPerCall: {
      service: perCall('service'),
      portkey: perCall('portkey'),
      upstream: perCall('upstream'),
      loadGenerator: perCall('loadGenerator'),
      ...(withForwarder && { forwarder: perCall('forwarder') }),
    },
    failed: series.reduce((sum, run) => sum + failedCalls(run), 0),
  };
}

export type RunsSummary = ReturnType<typeof summariseRuns>;

/** x / y per round (the runs of the same round) and of the medians. */
export function compareRuns<Run extends RoundRun>(x: string, xs: readonly Run[], y: string, ys: readonly Run[]) {
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

export type RunsComparison = ReturnType<typeof compareRuns>;

/**
 * Each side's runs summarised, and `compare(x, x's runs, y, y's runs)` for each of `pairs` whose
 * both sides ran.
 */
export function summariseSides<Side extends string, Run extends RoundRun, Comparison>(
  runs: readonly Run[],
  sideOf: (run: Run) => Side,
  sides: readonly Side[],
  pairs: ReadonlyArray<readonly [Side, Side]>,
  compare: (x: Side, xs: Run[], y: Side, ys: Run[]) => Comparison,
): { summaries: Partial<Record<Side, RunsSummary>>; comparisons: Comparison[] } {
  const of = (side: Side) => runs.filter((run) => sideOf(run) === side);
  const summaries: Partial<Record<Side, RunsSummary>> = {};
  for (const side of sides) summaries[side] = summariseRuns(of(side));
  const comparisons = pairs
    .filter(([x, y]) => summaries[x] && summaries[y])
    .map(([x, y]) => compare(x, of(x), y, of(y)));
  return { summaries, comparisons };
}

/**
 * Every answered call of a run reached the upstream once; the calls cut at the end of the run
 * (at most one per connection) may have too. Answers the problem, or undefined.
 */
export function reachProblem(run: RoundRun, at: string, connections: number): string | undefined {
  if (run.upstreamRequests >= run.ok && run.upstreamRequests <= run.ok + failedCalls(run) + connections) return;
  return `${at}: ${run.ok} calls answered but ${run.upstreamRequests} reached the upstream`;
}
