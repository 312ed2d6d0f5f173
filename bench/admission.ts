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
 * Candidates: a hand-written array-FIFO semaphore (the baseline, in this file); the lane with
 * the SystemClock the service runs with (every waiting call arms its queue-TTL timer, a real
 * setTimeout); the lane with a FakeClock (the same lane, its TTL timers only array entries);
 * cockatiel 3's bulkhead (`bulkhead(8, 0)` uncontended, `bulkhead(8, 100)` in bursts,
 * `.execute`); p-limit; p-queue. Every candidate's limit is checked first (peak 8, all 100
 * done). Figures: ops/s (calls per second), the median and min-max over the rounds, and per
 * round the ratio to the semaphore measured in that round, summarised the same way. Targets:
 * lane ≥ 0.8× the semaphore in both modes, ≥ 3× cockatiel and ≥ 5× p-limit in bursts.
 *
 * Rejection path: a lane of concurrency 1 and queue 0, occupied by a call that never settles,
 * refuses 1,000,000 calls (`run()` returns 'queue_full'). It runs in a child process started
 * with --expose-gc and a 64 MB young generation, so that an allocation of even a few bytes per
 * refusal would stay visible in the heap instead of being swept by a scavenge mid-loop.
 * Figures: bytes allocated per refusal (heap used after the loop minus before it, no GC in
 * between, and the number of GCs that did run during the loop: must be 0 for the figure to
 * hold), bytes retained per refusal (the same after a forced GC), and ns per refusal. The
 * control is cockatiel's refusal (`execute` rejects with a BulkheadRejectedError; the caller
 * has to `.catch` it), over 50,000 calls, with its time per refusal as a ratio to the lane's.
 *
 * Prints tables and writes bench/results/admission.json. Bounded: 55 s at most (about 25 s
 * by default), and the child process is stopped on error, SIGINT and SIGTERM.
 */
import { performance, PerformanceObserver } from 'node:perf_hooks';
import { setTimeout as wait } from 'node:timers/promises';
import { getHeapStatistics } from 'node:v8';
import { bulkhead } from 'cockatiel';
import pLimit from 'p-limit';
import PQueue from 'p-queue';
import { Bench } from 'tinybench';
import type { Clock } from '../src/common';
import { built } from './support/built';
import { median, pairedRatio, spread } from './support/stats';
import { printTable, writeResults } from './support/report';
import { option } from './support/options';
import { exitWithParent, runForResult, runMain, sendResult } from './support/processes';
import { Semaphore } from './support/semaphore';

const { Lane } = built<typeof import('../src/bulkhead/lane')>('bulkhead/lane');
const { SystemClock } = built<typeof import('../src/common')>('common');
const { FakeClock } = built<typeof import('../src/common/fake-clock')>('common/fake-clock');

const LIMIT = 8;
const BURST = 100;
/** Calls per tinybench iteration, so that its per-iteration timing costs next to nothing. */
const CALLS_PER_ITERATION = 1_000;
const CONTROL_REFUSALS = 50_000;
const BUDGET_MS = 55_000;
const CHILD_FLAG = '--rejection-child';
/** Big enough that no scavenge runs while the lane refuses, even if it allocated. */
const CHILD_V8_FLAGS = ['--expose-gc', '--min-semi-space-size=64', '--max-semi-space-size=64'];

type Mode = 'uncontended' | 'bursts';
type Task = () => Promise<number>;
type Run = (task: Task) => PromiseLike<unknown>;

const DONE = Promise.resolve(1);
const immediate: Task = () => DONE;

// ---------------------------------------------------------------------------------------------
// The candidates.

/**
 * A tighter hand-written semaphore, without async functions: an admitted call gets the task's
 * own promise back and one reaction releases the slot. Shown for reference, not the baseline.
 */
class CallbackSemaphore {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  run<T>(task: () => T | PromiseLike<T>): Promise<T> {
    if (this.active < this.limit) {
      this.active++;
      return this.start(task);
    }
    return new Promise<T>((resolve, reject) => this.waiting.push(() => void this.start(task).then(resolve, reject)));
  }

  private readonly release = () => {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  };

  private start<T>(task: () => T | PromiseLike<T>): Promise<T> {
    let outcome: Promise<T>;
    try {
      outcome = Promise.resolve(task());
    } catch (error) {
      outcome = Promise.reject(error);
    }
    outcome.then(this.release, this.release);
    return outcome;
  }
}

function laneRun(clock: Clock): Run {
  const lane = new Lane({ name: 'bench', concurrency: LIMIT, queueCapacity: BURST, clock });
  return (task) => {
    const admitted = lane.run(task);
    if (typeof admitted === 'string') throw new Error(`lane refused: ${admitted}`);
    return admitted;
  };
}

interface Candidate {
  name: string;
  make(mode: Mode): Run;
}

const BASELINE = 'semaphore';
const LANE = 'lane';
const CANDIDATES: Candidate[] = [
  {
    name: BASELINE,
    make: () => {
      const semaphore = new Semaphore(LIMIT);
      return (task) => semaphore.run(task);
    },
  },
  {
    name: 'semaphore (callbacks)',
    make: () => {
      const semaphore = new CallbackSemaphore(LIMIT);
      return (task) => semaphore.run(task);
    },
  },
  { name: LANE, make: () => laneRun(new SystemClock()) },
  { name: 'lane (FakeClock)', make: () => laneRun(new FakeClock()) },
  {
    name: 'cockatiel',
    make: (mode) => {
      const policy = bulkhead(LIMIT, mode === 'bursts' ? BURST : 0);
      return (task) => policy.execute(task);
    },
  },
  {
    name: 'p-limit',
    make: () => {
      const limit = pLimit(LIMIT);
      return (task) => limit(task);
    },
  },
  {
    name: 'p-queue',
    make: () => {
      const queue = new PQueue({ concurrency: LIMIT });
      return (task) => queue.add(task);
    },
  },
];

async function oneAtATime(run: Run): Promise<void> {
  for (let i = 0; i < CALLS_PER_ITERATION; i++) await run(immediate);
}

async function inBursts(run: Run): Promise<void> {
  const burst = new Array<PromiseLike<unknown>>(BURST);
  for (let b = 0; b < CALLS_PER_ITERATION / BURST; b++) {
    for (let i = 0; i < BURST; i++) burst[i] = run(immediate);
    await Promise.all(burst);
  }
}

/** Fails unless `run` lets exactly LIMIT of a burst run at once and completes all of it. */
async function checkLimit(name: string, run: Run): Promise<void> {
  let running = 0;
  let peak = 0;
  let done = 0;
  const task: Task = () => {
    running++;
    peak = Math.max(peak, running);
    return wait(1).then(() => {
      running--;
      done++;
      return 1;
    });
  };
  await Promise.all(Array.from({ length: BURST }, () => run(task)));
  if (peak !== LIMIT || done !== BURST) {
    throw new Error(`${name}: ran ${peak} at once (expected ${LIMIT}), completed ${done} of ${BURST}`);
  }
}

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
      const bench = new Bench({
        time: timeMs,
        warmupTime: Math.max(10, timeMs / 3),
        iterations: 8,
        warmupIterations: 4,
        throws: true,
      });
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

// ---------------------------------------------------------------------------------------------
// The rejection path, in a child process with --expose-gc.

interface RefusalFigures {
  calls: number;
  nsPerRefusal: number;
  /** Heap used right after the loop minus right before it; no GC may run in between. */
  allocatedBytes: number;
  allocatedBytesPerRefusal: number;
  /** Heap used after a forced GC minus before the loop. */
  retainedBytes: number;
  retainedBytesPerRefusal: number;
  gcsDuringLoop: number;
}

interface RejectionFigures {
  /** The same procedure around a loop that calls nothing: what the measuring itself allocates. */
  emptyLoop: RefusalFigures;
  lane: RefusalFigures;
  cockatiel: RefusalFigures;
}

const gcTimes: number[] = [];

function usedHeap(): number {
  return getHeapStatistics().used_heap_size;
}

function forceGc(): void {
  const gc = (globalThis as { gc?: () => void }).gc!;
  gc();
  gc();
}

/** Heap used before, right after (no GC between) and after a forced GC, around `refuse(calls)`. */
async function measureRefusals(
  calls: number,
  refuse: (calls: number) => void | Promise<void>,
): Promise<RefusalFigures> {
  await refuse(calls); // warm-up: compiled code and inline caches are not the lane's allocation
  forceGc();
  const before = usedHeap();
  const start = performance.now();
  await refuse(calls);
  const end = performance.now();
  const afterLoop = usedHeap();
  forceGc();
  const afterGc = usedHeap();
  await wait(50); // the GC observer reports asynchronously
  return {
    calls,
    nsPerRefusal: ((end - start) * 1e6) / calls,
    allocatedBytes: afterLoop - before,
    allocatedBytesPerRefusal: (afterLoop - before) / calls,
    retainedBytes: afterGc - before,
    retainedBytesPerRefusal: (afterGc - before) / calls,
    gcsDuringLoop: gcTimes.filter((at) => at >= start && at <= end).length,
  };
}

async function rejectionChild(refusals: number): Promise<void> {
  if (typeof (globalThis as { gc?: unknown }).gc !== 'function') throw new Error('run with --expose-gc');
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcTimes.push(entry.startTime);
  });
  observer.observe({ entryTypes: ['gc'] });

  let unexpected = 0;
  const emptyLoop = await measureRefusals(refusals, (calls) => {
    for (let i = 0; i < calls; i++) {
      if (i < 0) unexpected++;
    }
  });

  const lane = new Lane({ name: 'full', concurrency: 1, queueCapacity: 0, clock: new SystemClock() });
  const holder = lane.run(() => new Promise<never>(() => undefined));
  if (typeof holder === 'string') throw new Error(`the holder was refused: ${holder}`);
  const laneFigures = await measureRefusals(refusals, (calls) => {
    for (let i = 0; i < calls; i++) {
      if (lane.run(immediate) !== 'queue_full') unexpected++;
    }
  });
  if (unexpected > 0) throw new Error(`the full lane admitted ${unexpected} calls`);

  const policy = bulkhead(1, 0);
  void policy.execute(() => new Promise<never>(() => undefined));
  let rejected = 0;
  const countRejection = () => void rejected++;
  const cockatielFigures = await measureRefusals(CONTROL_REFUSALS, async (calls) => {
    for (let i = 0; i < calls; i++) policy.execute(immediate).catch(countRejection);
    await new Promise((settled) => setImmediate(settled));
  });
  observer.disconnect();
  if (rejected !== 2 * CONTROL_REFUSALS) throw new Error(`cockatiel rejected ${rejected} of ${2 * CONTROL_REFUSALS}`);
  sendResult({ emptyLoop, lane: laneFigures, cockatiel: cockatielFigures } satisfies RejectionFigures);
}

function runRejectionChild(refusals: number): Promise<RejectionFigures> {
  return runForResult<RejectionFigures>(
    'rejection child',
    __filename,
    [CHILD_FLAG, '--refusals', String(refusals)],
    CHILD_V8_FLAGS,
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
    { what: `lane / ${BASELINE}, uncontended`, ratio: ratio('uncontended', BASELINE, LANE), target: 0.8 },
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

if (process.argv.includes(CHILD_FLAG)) {
  exitWithParent();
  rejectionChild(option('refusals', 1_000_000, 1)).then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`rejection child failed: ${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
} else {
  runMain('admission', main, { budgetMs: BUDGET_MS });
}
