/**
 * Admission benchmark (issue 6 item 4): what entering and leaving a lane costs, side by side
 * with the limiters people would otherwise put in their own code, and what a refusal costs.
 *
 * Usage (from the repository root):
 *   npm run bench -- admission [--rounds N] [--time MS] [--quick]
 *
 * Options:
 *   --rounds N   alternated rounds (default 6, at least 3); the candidates' order rotates each round
 *   --time MS    measured time per candidate per round, after a short warm-up (default 150)
 *   --quick      3 rounds of 40 ms and 100,000 refusals: a few seconds, for CI (nothing written)
 *
 * Throughput: each candidate limits to 8 concurrent calls and runs a task that returns an
 * already resolved promise, measured with tinybench; one tinybench iteration is 1,000 calls.
 *   - uncontended: one call at a time (`await run(task)` 1,000 times), so nothing ever waits;
 *   - bursts: 100 calls at once over the limit of 8 (92 wait), awaited together, 10 times.
 * Candidates (bench/admission/candidates.ts): a hand-written array-FIFO semaphore (the
 * baseline, bench/support/semaphore.ts); the lane as built (dist/) with the SystemClock the
 * service runs with (its one queue-TTL timer a real Node timer, its clock reads
 * performance.now()); the same lane on a FakeClock (no real timer or clock read); cockatiel 3's bulkhead (`bulkhead(8, 0)` uncontended, `bulkhead(8, 100)` in bursts,
 * `.execute`); p-limit; p-queue. Every candidate's limit is checked first (peak 8, all 100
 * done). Figures: ops/s (calls per second), the median and min-max over the rounds, and per
 * round the ratio to the semaphore measured in that round, summarised the same way. Targets:
 * lane ≥ 0.9× the semaphore uncontended (issue 16 item 4) and ≥ 0.8× in bursts, ≥ 3× cockatiel
 * and ≥ 5× p-limit in bursts.
 *
 * Rejection path (bench/admission/refusals.ts, a child process of its own): a full lane
 * refuses 1,000,000 calls, five times after a warm-up. Figures: bytes allocated per refusal
 * (heap used after the loop minus before it, no GC in between, of the least allocating of the
 * five loops, and the number of GCs that ran during it: must be 0 for the figure to hold),
 * bytes retained per refusal (the same after a forced GC), and ns per refusal (median of the
 * five). The control is cockatiel's refusal (`execute` rejects with a BulkheadRejectedError;
 * the caller has to `.catch` it), over 50,000 calls, with its time per refusal as a ratio to
 * the lane's.
 *
 * Prints tables and writes bench/results/admission.json. Bounded: 55 s at most (about 25 s
 * by default), and the child process is stopped on error, SIGINT and SIGTERM.
 */
import { resolve } from 'node:path';
import {
  BASELINE,
  BURST,
  CALLS_PER_ITERATION,
  CANDIDATES,
  checkLimit,
  inBursts,
  LANE,
  LIMIT,
  type Mode,
  oneAtATime,
  type Run,
} from './admission/candidates';
import { type RefusalFigures, type RejectionFigures, REFUSALS_NODE_ARGS } from './admission/refusals';
import { median, pairedRatio, spread } from './support/stats';
import { printTable, writeResults } from './support/report';
import { microBench } from './support/micro-bench';
import { option } from './support/options';
import { runForResult, runMain } from './support/processes';

const BUDGET_MS = 55_000;

// ---------------------------------------------------------------------------------------------
// Throughput, alternated rounds.

interface Spread {
  median: number;
  min: number;
  max: number;
}

const summarise = (values: number[]): Spread => ({ median: median(values), ...spread(values) });

async function measureThroughput(rounds: number, timeMs: number) {
  const runners = new Map<Mode, Map<string, Run>>();
  for (const mode of ['uncontended', 'bursts'] as const) {
    const byName = new Map<string, Run>();
    for (const candidate of CANDIDATES) {
      byName.set(candidate.name, candidate.make(mode));
      if (mode === 'bursts') await checkLimit(candidate.name, candidate.make(mode));
    }
    runners.set(mode, byName);
  }

  const opsPerS = new Map<Mode, Map<string, number[]>>();
  for (let round = 0; round < rounds; round++) {
    // Rotating the order spreads drift (thermal, a neighbour's load, GC debt) over everyone.
    const order = CANDIDATES.map((_, i) => CANDIDATES[(i + round) % CANDIDATES.length]!);
    for (const mode of ['uncontended', 'bursts'] as const) {
      const bench = microBench(timeMs);
      for (const { name } of order) {
        const run = runners.get(mode)!.get(name)!;
        // Declared async: tinybench would otherwise call the function once more to find out.
        bench.add(name, mode === 'bursts' ? () => inBursts(run) : () => oneAtATime(run), { async: true });
      }
      await bench.run();
      const byName = opsPerS.get(mode) ?? new Map<string, number[]>();
      opsPerS.set(mode, byName);
      for (const task of bench.tasks) {
        const result = task.result;
        if (result.state !== 'completed') throw new Error(`${task.name} (${mode}): ${result.state}`);
        const ops = CALLS_PER_ITERATION / (result.period / 1_000);
        byName.set(task.name, [...(byName.get(task.name) ?? []), ops]);
      }
    }
    process.stdout.write(`  round ${round + 1}/${rounds} done\n`);
  }

  return (['uncontended', 'bursts'] as const).map((mode) => {
    const byName = opsPerS.get(mode)!;
    const baseline = byName.get(BASELINE)!;
    return {
      mode,
      candidates: CANDIDATES.map(({ name }) => ({
        name,
        opsPerS: byName.get(name)!,
        ops: summarise(byName.get(name)!),
        vsSemaphore: pairedRatio(baseline, byName.get(name)!),
      })),
      byName,
    };
  });
}

function runRejectionChild(refusals: number): Promise<RejectionFigures> {
  return runForResult<RejectionFigures>(
    'rejection child',
    resolve(__dirname, 'admission/refusals.ts'),
    ['--refusals', String(refusals)],
    REFUSALS_NODE_ARGS,
  );
}

// ---------------------------------------------------------------------------------------------
// The run.

const minMax = (s: Spread, digits = 2) => `${s.min.toFixed(digits)}-${s.max.toFixed(digits)}`;
const millions = (ops: number) => `${(ops / 1e6).toFixed(2)} M`;

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const rounds = option('rounds', quick ? 3 : 6, 3);
  const timeMs = option('time', quick ? 40 : 150, 10);
  const refusals = quick ? 100_000 : 1_000_000;
  process.stdout.write(
    `admission: ${rounds} alternated rounds of ${timeMs} ms per candidate and mode, limit ${LIMIT}, ` +
      `bursts of ${BURST}; node ${process.version}\n`,
  );

  const throughput = await measureThroughput(rounds, timeMs);
  for (const { mode, candidates } of throughput) {
    printTable(
      `${mode}: ops/s over ${rounds} rounds, and the ratio to the ${BASELINE} per round (median, min-max)`,
      candidates.map(({ name, ops, vsSemaphore }) => ({
        limiter: name,
        'ops/s median': millions(ops.median),
        'ops/s min-max': `${millions(ops.min)}-${millions(ops.max)}`,
        [`× ${BASELINE}`]: vsSemaphore.median,
        'min-max': minMax(vsSemaphore),
      })),
    );
  }

  const ratio = (mode: Mode, base: string, of: string) => {
    const byName = throughput.find((t) => t.mode === mode)!.byName;
    return pairedRatio(byName.get(base)!, byName.get(of)!);
  };
  // The targets, then the comparisons a reader will want next to them.
  const comparisons = [
    { what: `lane / ${BASELINE}, uncontended`, ratio: ratio('uncontended', BASELINE, LANE), target: 0.9 },
    { what: `lane / ${BASELINE}, bursts`, ratio: ratio('bursts', BASELINE, LANE), target: 0.8 },
    { what: 'lane / cockatiel, bursts', ratio: ratio('bursts', 'cockatiel', LANE), target: 3 },
    { what: 'lane / p-limit, bursts', ratio: ratio('bursts', 'p-limit', LANE), target: 5 },
    { what: `${BASELINE} / cockatiel, bursts`, ratio: ratio('bursts', 'cockatiel', BASELINE) },
    { what: `${BASELINE} / p-limit, bursts`, ratio: ratio('bursts', 'p-limit', BASELINE) },
    { what: 'lane / cockatiel, uncontended', ratio: ratio('uncontended', 'cockatiel', LANE) },
    { what: 'lane / p-limit, uncontended', ratio: ratio('uncontended', 'p-limit', LANE) },
    { what: 'lane / semaphore (callbacks), uncontended', ratio: ratio('uncontended', 'semaphore (callbacks)', LANE) },
    { what: 'lane / semaphore (callbacks), bursts', ratio: ratio('bursts', 'semaphore (callbacks)', LANE) },
    { what: 'lane / lane (FakeClock), bursts', ratio: ratio('bursts', 'lane (FakeClock)', LANE) },
  ].map((c) => ({ ...c, met: c.target === undefined ? undefined : c.ratio.median >= c.target }));
  printTable(
    'ratios per round (median, min-max); "lane" is the lane with the SystemClock',
    comparisons.map((c) => ({
      comparison: c.what,
      'ratio median': c.ratio.median,
      'min-max': minMax(c.ratio),
      target: c.target === undefined ? '' : `≥ ${c.target}`,
      met: c.met === undefined ? '' : c.met ? 'yes' : 'NO',
    })),
  );

  process.stdout.write(`\nrejection path: ${refusals.toLocaleString('en')} refusals of a full lane (child process)\n`);
  const rejection = await runRejectionChild(refusals);
  printTable('rejection path: bytes and ns per call', [
    { loop: 'empty loop (the measuring itself)', ...rejectionRow(rejection.emptyLoop) },
    { loop: 'lane refuses (returns queue_full)', ...rejectionRow(rejection.lane) },
    { loop: 'cockatiel refuses (execute + catch)', ...rejectionRow(rejection.cockatiel) },
  ]);
  const costRatio = rejection.cockatiel.nsPerRefusal / rejection.lane.nsPerRefusal;
  // Any object costs at least 8 bytes, so under 1 byte per call means no call allocated one
  // (the few kB left are the measuring's own, as the empty loop shows).
  const allocatesNothing = rejection.lane.gcsDuringLoop === 0 && rejection.lane.allocatedBytesPerRefusal < 1;
  process.stdout.write(
    `a cockatiel refusal takes ${costRatio.toFixed(0)}× the time of a lane's; ` +
      `the lane's refusals allocate nothing (no GC during the loop, < 1 byte per refusal): ${allocatesNothing ? 'yes' : 'NO'}\n`,
  );
  if (!allocatesNothing) process.exitCode = 1;

  if (quick) {
    process.stdout.write('quick mode: results not written\n');
    return;
  }
  const file = writeResults('admission', {
    settings: {
      rounds,
      timeMsPerCandidate: timeMs,
      limit: LIMIT,
      burst: BURST,
      callsPerIteration: CALLS_PER_ITERATION,
    },
    throughput: throughput.map(({ mode, candidates }) => ({
      mode,
      candidates: candidates.map(({ name, opsPerS, ops, vsSemaphore }) => ({ name, opsPerS, ops, vsSemaphore })),
    })),
    comparisons,
    rejection: { ...rejection, cockatielTimePerRefusalVsLane: costRatio, laneAllocatesNothing: allocatesNothing },
  });
  process.stdout.write(`wrote ${file}\n`);
}

function rejectionRow(figures: RefusalFigures) {
  return {
    calls: figures.calls,
    'ns/call': figures.nsPerRefusal,
    'allocated B': figures.allocatedBytes,
    'allocated B/call': figures.allocatedBytesPerRefusal,
    'retained B/call': figures.retainedBytesPerRefusal,
    'GCs in loop': figures.gcsDuringLoop,
  };
}

runMain('admission', main, { budgetMs: BUDGET_MS });
