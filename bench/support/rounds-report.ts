/**
 * What a benchmark of sides in rounds (bench/support/rounds.ts) prints: its first lines, a
 * line per run, the table per side and the table of ratios.
 */
import { cpus, loadavg } from 'node:os';
import { fixed, printTable, range } from './report';
import { failedCalls, type RoundRun, type RunsComparison, type RunsSummary } from './rounds';

/** What runs, how Portkey takes part (`portkey`: its version, or why it was left out), the machine. */
export function writeRunHeader(
  bench: string,
  settings: { pairs: number; durationS: number; connections: number },
  sides: readonly string[],
  portkey: string,
): void {
  process.stdout.write(
    `${bench}: ${settings.pairs} rounds of ${sides.join(', ')}, ${settings.durationS} s each, ` +
      `${settings.connections} connections\n` +
      `portkey: ${portkey}\n` +
      `node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()
        .map((load) => load.toFixed(2))
        .join(' ')}\n`,
  );
}

/** A run's figures, its failures if any (a checked run's wrong answers among them), its CPU. */
export function writeRunLine(side: string, run: RoundRun): void {
  const failures = `${run.non2xx} non-2xx, ${run.wrong2xx === undefined ? '' : `${run.wrong2xx} wrong, `}${run.errors} errors`;
  process.stdout.write(
    `  round ${run.round} ${side.padEnd(7)}: p50 ${fixed(run.p50Ms)} ms, p99 ${fixed(run.p99Ms)} ms, ` +
      `${fixed(run.reqPerS, 0)} req/s${failedCalls(run) ? `, ${failures}` : ''}; ` +
      `CPU cores: service ${fixed(run.cpuCores.service)}, portkey ${fixed(run.cpuCores.portkey)}, ` +
      `upstream ${fixed(run.cpuCores.upstream)}, ` +
      `${run.cpuCores.forwarder === undefined ? '' : `forwarder ${fixed(run.cpuCores.forwarder)}, `}` +
      `load generator ${fixed(run.cpuCores.loadGenerator)}\n`,
  );
}

/** A row per side, named in the first column (`column`). */
export function printSidesTable<Side extends string>(
  title: string,
  column: string,
  sides: readonly Side[],
  summaries: Partial<Record<Side, RunsSummary>>,
): void {
  const withForwarder = sides.some((side) => summaries[side]!.cpuUsPerCall.forwarder !== undefined);
  printTable(
    title,
    sides.map((side) => {
      const summary = summaries[side]!;
      return {
        [column]: side,
        'p50 ms': range(summary.p50Ms),
        'p99 ms': range(summary.p99Ms),
        'req/s': range(summary.reqPerS, 0),
        'service µs/call': fixed(summary.cpuUsPerCall.service, 0),
        ...(withForwarder && { 'forwarder µs/call': fixed(summary.cpuUsPerCall.forwarder ?? Number.NaN, 0) }),
        'portkey µs/call': fixed(summary.cpuUsPerCall.portkey, 0),
        'upstream µs/call': fixed(summary.cpuUsPerCall.upstream, 0),
        'load gen µs/call': fixed(summary.cpuUsPerCall.loadGenerator, 0),
        failed: String(summary.failed),
      };
    }),
  );
}

/**
 * Two rows per comparison: its ratios per round, then of the medians. `extra` adds a last
 * column that only the row of the medians fills.
 */
export function printRatiosTable<Comparison extends RunsComparison>(
  title: string,
  comparisons: readonly Comparison[],
  extra?: { column: string; ofMedians: (comparison: Comparison) => string },
): void {
  printTable(
    title,
    comparisons.flatMap((c) => [
      {
        ratio: `${c.name} per round`,
        'p50 ms': range(c.perRound.p50Ms, 3),
        'p99 ms': range(c.perRound.p99Ms, 3),
        'req/s': range(c.perRound.reqPerS, 3),
        ...(extra && { [extra.column]: '' }),
      },
      {
        ratio: `${c.name} of medians`,
        'p50 ms': fixed(c.ofMedians.p50Ms, 3),
        'p99 ms': fixed(c.ofMedians.p99Ms, 3),
        'req/s': fixed(c.ofMedians.reqPerS, 3),
        ...(extra && { [extra.column]: extra.ofMedians(c) }),
      },
    ]),
  );
}
