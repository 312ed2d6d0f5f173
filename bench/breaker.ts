/**
 * Breaker benchmark: what one call through a circuit breaker costs with opossum as the engine
 * (the Breaker of dist/), against the hand-written breaker it replaced, in one process.
 *
 * Usage (from the repository root):
 *   npm run bench -- breaker [--rounds N] [--time MS] [--calls N] [--quick]
 *
 * Options:
 *   --rounds N   alternated rounds (default 6, at least 3); the candidates' order rotates each round
 *   --time MS    measured time per candidate, mode and round, after a short warm-up (default 150)
 *   --calls N    calls per loop of the allocation child (default 10,000: the most allocating
 *                candidate, 4.7 KB a call, must fit in the 64 MB young generation)
 *   --quick      3 rounds of 40 ms and loops of 5,000 calls: a few seconds, for CI (nothing written)
 *
 * Candidates (bench/breaker/candidates.ts), each on a SystemClock as the service runs them,
 * with settings under which none ever opens (errorThresholdPercentage 100), so every call of a
 * mode takes the same path:
 *   - direct call: the action called, no breaker (the floor);
 *   - hand-written: the baseline, the Breaker as it was at commit afb70a5, frozen in
 *     bench/breaker/frozen/ (its own rolling window, one promise reaction per attempt);
 *   - opossum Breaker: the Breaker of dist/, opossum 10 as its engine (opossum-engine.ts) with the
 *     window of rolling-window.ts;
 *   - opossum before afb70a5: for reference, the opossum Breaker that commit replaced (opossum's
 *     own Status), frozen likewise.
 * The frozen ones are compiled by tsc with the build's options, like dist/ (bench/breaker/load.ts).
 * Modes: `successes` (the action resolves) and `failures` (it rejects with a `transient`
 * ResilienceError, which counts). Each call is awaited before the next; one tinybench
 * iteration is 1,000 calls.
 *
 * Figures: ns per call (median over the rounds, min-max), and per round the ratio to the
 * hand-written breaker measured in that round, plus the same ratio of what each adds over a
 * direct call. Bytes per call come from a child process (bench/breaker/allocation.ts): heap
 * allocated per call in the least allocating of five loops with no GC in between, and heap
 * retained per call after a forced GC; as ratios to the hand-written breaker too. Check: the
 * opossum Breaker retains nothing per call (under 1 byte): opossum's own Status kept a latency
 * for each one.
 *
 * Prints tables and writes bench/results/breaker.json. Bounded: 60 s at most (about 15 s by
 * default), and the child process is stopped on error, SIGINT and SIGTERM.
 */
import { resolve } from 'node:path';
import { ALLOCATION_NODE_ARGS, type AllocationFigures } from './breaker/allocation';
import {
  BASELINE,
  CALLS_PER_ITERATION,
  calls,
  CANDIDATES,
  checkCounts,
  DIRECT,
  type Guard,
  type Mode,
  MODES,
  OPOSSUM,
} from './breaker/candidates';
import { microBench } from './support/micro-bench';
import { option } from './support/options';
import { runForResult, runMain } from './support/processes';
import { fixed, printTable, range, writeResults } from './support/report';
import { pairedRatio, summary } from './support/stats';

const BUDGET_MS = 60_000;

type Series = Map<Mode, Map<string, number[]>>;

/** ns per call of every candidate in every mode, one value per round. */
async function measureTime(rounds: number, timeMs: number): Promise<Series> {
  const guards = new Map<string, Guard>(CANDIDATES.map(({ name, make }) => [name, make()]));
  const nsPerCall: Series = new Map(MODES.map((mode) => [mode, new Map()]));
  for (let round = 0; round < rounds; round++) {
    // Rotating the order spreads drift (thermal, a neighbour's load, GC debt) over everyone.
    const order = CANDIDATES.map((_, i) => CANDIDATES[(i + round) % CANDIDATES.length]!);
    for (const mode of MODES) {
      const bench = microBench(timeMs);
      for (const { name } of order) {
        const guard = guards.get(name)!;
        // Declared async: tinybench would otherwise call the function once more to find out.
        bench.add(name, () => calls(guard, mode, CALLS_PER_ITERATION), { async: true });
      }
      await bench.run();
      for (const task of bench.tasks) {
        const result = task.result;
        if (result.state !== 'completed') throw new Error(`${task.name} (${mode}): ${result.state}`);
        const byName = nsPerCall.get(mode)!;
        byName.set(task.name, [...(byName.get(task.name) ?? []), (result.period * 1e6) / CALLS_PER_ITERATION]);
      }
    }
    process.stdout.write(`  round ${round + 1}/${rounds} done\n`);
  }
  for (const guard of guards.values()) guard.shutdown?.();
  return nsPerCall;
}

/** Per round, what `name` adds over a direct call divided by what the baseline adds. */
function addedRatio(byName: Map<string, number[]>, name: string) {
  const direct = byName.get(DIRECT)!;
  const added = (of: string) => byName.get(of)!.map((ns, i) => ns - direct[i]!);
  return pairedRatio(added(BASELINE), added(name));
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const rounds = option('rounds', quick ? 3 : 6, 3);
  const timeMs = option('time', quick ? 40 : 150, 10);
  const loopCalls = quick ? 5_000 : option('calls', 10_000, 1_000);
  process.stdout.write(
    `breaker: ${rounds} alternated rounds of ${timeMs} ms per candidate and mode; node ${process.version}\n`,
  );
  for (const candidate of CANDIDATES) await checkCounts(candidate);

  const time = await measureTime(rounds, timeMs);
  const timeRows = MODES.flatMap((mode) => {
    const byName = time.get(mode)!;
    return CANDIDATES.map(({ name }) => ({
      mode,
      candidate: name,
      'ns/call': range(summary(byName.get(name)!), 0),
      [`× ${BASELINE}`]: name === DIRECT ? '' : range(pairedRatio(byName.get(BASELINE)!, byName.get(name)!)),
      [`added over direct, × ${BASELINE}'s`]: name === DIRECT ? '' : range(addedRatio(byName, name)),
    }));
  });
  printTable(`time per call: median (min-max) over ${rounds} rounds; ratios per round`, timeRows);

  process.stdout.write(`\nbytes per call: loops of ${loopCalls.toLocaleString('en')} calls (child process)\n`);
  const allocation = await runForResult<AllocationFigures[]>(
    'allocation child',
    resolve(__dirname, 'breaker/allocation.ts'),
    ['--calls', String(loopCalls)],
    ALLOCATION_NODE_ARGS,
  );
  const figuresOf = (mode: Mode, name: string) => allocation.find((f) => f.mode === mode && f.candidate === name)!;
  const allocationRows = allocation.map((figures) => {
    const baseline = figuresOf(figures.mode, BASELINE);
    const direct = figuresOf(figures.mode, DIRECT);
    const isDirect = figures.candidate === DIRECT;
    return {
      mode: figures.mode,
      candidate: figures.candidate,
      'allocated B/call': fixed(figures.allocatedBytesPerCall, 1),
      [`× ${BASELINE}`]: isDirect ? '' : fixed(figures.allocatedBytesPerCall / baseline.allocatedBytesPerCall),
      [`added over direct, × ${BASELINE}'s`]: isDirect
        ? ''
        : fixed(
            (figures.allocatedBytesPerCall - direct.allocatedBytesPerCall) /
              (baseline.allocatedBytesPerCall - direct.allocatedBytesPerCall),
          ),
      'retained B/call': fixed(figures.retainedBytesPerCall, 2),
      'GCs in loop': figures.gcsDuringLoop,
    };
  });
  printTable('heap per call: the least allocating of five loops', allocationRows);

  // Any object costs at least 8 bytes: under 1 byte a call means no call kept one.
  const retained = Math.max(...MODES.map((mode) => figuresOf(mode, OPOSSUM).retainedBytesPerCall));
  const retainsNothing = retained < 1;
  const timeRatio = (mode: Mode) => pairedRatio(time.get(mode)!.get(BASELINE)!, time.get(mode)!.get(OPOSSUM)!).median;
  process.stdout.write(
    `\nopossum Breaker / hand-written, time per call: ${MODES.map((mode) => `${mode} ${fixed(timeRatio(mode))}×`).join(', ')}; ` +
      `it retains nothing per call (< 1 byte): ${retainsNothing ? 'yes' : `NO (${fixed(retained)} B)`}\n`,
  );
  if (!retainsNothing) process.exitCode = 1;
  if (allocation.some((f) => f.gcsDuringLoop > 0)) {
    process.stdout.write('a GC ran during a measured loop: its allocation figure is low by what the GC swept\n');
  }

  if (quick) {
    process.stdout.write('quick mode: results not written\n');
    return;
  }
  const file = writeResults('breaker', {
    settings: { rounds, timeMsPerCandidate: timeMs, callsPerIteration: CALLS_PER_ITERATION, loopCalls },
    nsPerCall: Object.fromEntries(MODES.map((mode) => [mode, Object.fromEntries(time.get(mode)!)])),
    time: timeRows,
    allocation,
    opossumRetainsNothing: retainsNothing,
  });
  process.stdout.write(`wrote ${file}\n`);
}

runMain('breaker', main, { budgetMs: BUDGET_MS });
