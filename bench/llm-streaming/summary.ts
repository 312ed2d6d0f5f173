/**
 * The streaming benchmark's runs, each scenario's sides summarised, and the floor and the service
 * against direct, and the service against the floor.
 */
import { fixed, printTable, range } from '../support/report';
import { median, percentile, summary } from '../support/stats';
import { type Scenario, type Side, SIDES } from './setup';
import { CONTENT_CHUNKS } from './sse-upstream';
import type { StreamsResult } from './stream-client';

/** One side's run of a scenario in one round. */
export interface StreamRun {
  variant: Scenario['variant'];
  concurrency: number;
  side: Side;
  round: number;
  sent: number;
  ok: number;
  failed: number;
  firstFailure?: string;
  /** Of the whole streams: time to the first content chunk, and to the end, in ms. */
  ttftP50Ms: number;
  ttftP99Ms: number;
  totalP50Ms: number;
  totalP99Ms: number;
  /** Whole streams per second of the run, and their content chunks per second. */
  streamsPerS: number;
  chunksPerS: number;
  /** CPU time each process spent per whole stream, in µs (a proxy the side does not pass idles). */
  cpuUsPerStream: { service: number; floor: number; upstream: number; client: number };
  /** What the upstream saw of this side's streams during the run. */
  upstream: { streams: number; cancelled: number; rejected: number; connections: number };
}

/** A run's figures from its streams' times. */
export function runFigures(result: StreamsResult) {
  return {
    ttftP50Ms: percentile(result.ttftMs, 50),
    ttftP99Ms: percentile(result.ttftMs, 99),
    totalP50Ms: percentile(result.totalMs, 50),
    totalP99Ms: percentile(result.totalMs, 99),
    streamsPerS: result.ok / result.durationS,
    chunksPerS: (result.ok * CONTENT_CHUNKS) / result.durationS,
  };
}

const scenarioName = (s: Scenario) => `${s.variant}, ${s.concurrency} at a time`;

/** Each side of a scenario over its rounds, and the sides against each other round by round. */
export function summariseScenario(scenario: Scenario, runs: readonly StreamRun[]) {
  const of = (side: Side) =>
    runs.filter((r) => r.variant === scenario.variant && r.concurrency === scenario.concurrency && r.side === side);
  const sides = SIDES.map((side) => {
    const series = of(side);
    return {
      side,
      ttftP50Ms: summary(series.map((r) => r.ttftP50Ms)),
      ttftP99Ms: summary(series.map((r) => r.ttftP99Ms)),
      totalP50Ms: summary(series.map((r) => r.totalP50Ms)),
      streamsPerS: summary(series.map((r) => r.streamsPerS)),
      chunksPerS: summary(series.map((r) => r.chunksPerS)),
      serviceCpuUsPerStream: median(series.map((r) => r.cpuUsPerStream.service)),
      floorCpuUsPerStream: median(series.map((r) => r.cpuUsPerStream.floor)),
      clientCpuUsPerStream: median(series.map((r) => r.cpuUsPerStream.client)),
    };
  });
  // Per round: side `b`'s run against side `a`'s run of the same round, which ran before it.
  const perRound = (a: Side, b: Side, pick: (a: StreamRun, b: StreamRun) => number) => {
    const baseline = new Map(of(a).map((run) => [run.round, run]));
    return summary(of(b).map((run) => pick(baseline.get(run.round)!, run)));
  };
  return {
    scenario: scenarioName(scenario),
    ...scenario,
    sides,
    /** service - direct, per round, in ms. */
    addedTtftP50Ms: perRound('direct', 'service', (d, s) => s.ttftP50Ms - d.ttftP50Ms),
    addedTtftP99Ms: perRound('direct', 'service', (d, s) => s.ttftP99Ms - d.ttftP99Ms),
    /** service / direct, per round. */
    streamsPerSRatio: perRound('direct', 'service', (d, s) => s.streamsPerS / d.streamsPerS),
    /** floor - direct, per round, in ms: what the least proxy adds. */
    floorAddedTtftP50Ms: perRound('direct', 'floor', (d, f) => f.ttftP50Ms - d.ttftP50Ms),
    /** floor / direct, per round. */
    floorStreamsPerSRatio: perRound('direct', 'floor', (d, f) => f.streamsPerS / d.streamsPerS),
    /** service - floor, per round, in ms: what the route adds beyond the least proxy. */
    serviceOverFloorTtftP50Ms: perRound('floor', 'service', (f, s) => s.ttftP50Ms - f.ttftP50Ms),
    serviceOverFloorTtftP99Ms: perRound('floor', 'service', (f, s) => s.ttftP99Ms - f.ttftP99Ms),
    /** service / floor, per round. */
    serviceToFloorStreamsPerSRatio: perRound('floor', 'service', (f, s) => s.streamsPerS / f.streamsPerS),
  };
}

export type ScenarioSummary = ReturnType<typeof summariseScenario>;

export function printSummaries(summaries: readonly ScenarioSummary[]): void {
  printTable(
    'per scenario and side, median (min-max) over the rounds',
    summaries.flatMap((s) =>
      s.sides.map((side) => ({
        scenario: s.scenario,
        side: side.side,
        'TTFT p50 ms': range(side.ttftP50Ms),
        'TTFT p99 ms': range(side.ttftP99Ms),
        'end p50 ms': range(side.totalP50Ms),
        'streams/s': range(side.streamsPerS, 0),
        'chunks/s': range(side.chunksPerS, 0),
        // The CPU of the process the side's streams pass (the direct side's pass none).
        'proxy CPU µs/stream': proxyCpu(side),
        'client CPU µs/stream': fixed(side.clientCpuUsPerStream, 0),
      })),
    ),
  );
  printTable(
    'floor and service against direct, per round: median (min-max)',
    summaries.map((s) => ({
      scenario: s.scenario,
      'added TTFT p50 ms floor': range(s.floorAddedTtftP50Ms),
      'added TTFT p50 ms service': range(s.addedTtftP50Ms),
      'added TTFT p99 ms service': range(s.addedTtftP99Ms),
      'streams/s floor / direct': range(s.floorStreamsPerSRatio, 3),
      'streams/s service / direct': range(s.streamsPerSRatio, 3),
    })),
  );
  printTable(
    'service against the floor, per round: median (min-max)',
    summaries.map((s) => ({
      scenario: s.scenario,
      'TTFT p50 ms service - floor': range(s.serviceOverFloorTtftP50Ms),
      'TTFT p99 ms service - floor': range(s.serviceOverFloorTtftP99Ms),
      'streams/s service / floor': range(s.serviceToFloorStreamsPerSRatio, 3),
    })),
  );
}

function proxyCpu(side: ScenarioSummary['sides'][number]): string {
  if (side.side === 'service') return fixed(side.serviceCpuUsPerStream, 0);
  if (side.side === 'floor') return fixed(side.floorCpuUsPerStream, 0);
  return '-';
}

export function writeRunLine(run: StreamRun): void {
  process.stdout.write(
    `  ${run.variant} x${run.concurrency} round ${run.round} ${run.side.padEnd(7)}: ` +
      `TTFT p50 ${fixed(run.ttftP50Ms)} ms, p99 ${fixed(run.ttftP99Ms)} ms; end p50 ${fixed(run.totalP50Ms)} ms; ` +
      `${fixed(run.streamsPerS, 0)} streams/s, ${fixed(run.chunksPerS, 0)} chunks/s` +
      `${run.failed > 0 ? `, ${run.failed} FAILED` : ''}; CPU µs/stream: service ${fixed(run.cpuUsPerStream.service, 0)}, ` +
      `floor ${fixed(run.cpuUsPerStream.floor, 0)}, ` +
      `upstream ${fixed(run.cpuUsPerStream.upstream, 0)}, client ${fixed(run.cpuUsPerStream.client, 0)}; ` +
      `upstream connections opened ${run.upstream.connections}\n`,
  );
}
