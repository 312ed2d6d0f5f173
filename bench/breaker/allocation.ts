/**
 * The breaker benchmark's bytes per call, in a process of its own started with --expose-gc and
 * a 64 MB young generation (so that what the calls allocate stays in the heap instead of being
 * swept by a scavenge mid-loop): for each candidate and mode, `--calls N` calls awaited one
 * after the other, five times after a warm-up (allocated bytes), then 100,000 calls through a
 * new breaker (retained bytes).
 */
import { setTimeout as wait } from 'node:timers/promises';
import { forceGc, GcLog, usedHeap } from '../support/heap';
import { option } from '../support/options';
import { exitWithParent, sendResult } from '../support/processes';
import { calls, type Candidate, CANDIDATES, type Mode, MODES } from './candidates';

/** Node options of the process this runs in. */
export const ALLOCATION_NODE_ARGS = ['--expose-gc', '--min-semi-space-size=64', '--max-semi-space-size=64'];

export interface AllocationFigures {
  candidate: string;
  mode: Mode;
  calls: number;
  /** Heap used right after the loop minus right before it, of the least allocating loop. */
  allocatedBytesPerCall: number;
  /** Heap a new breaker kept after 100,000 calls and a forced GC, per call. */
  retainedBytesPerCall: number;
  /** GCs that ran during that loop: the allocation figure holds only at 0. */
  gcsDuringLoop: number;
}

/**
 * Occasional heap growth that has nothing to do with the calls (code of an optimisation that
 * finished on a background thread mid-loop) adds to one loop; a per-call allocation adds to
 * every loop. So each is measured this many times and the least allocating loop counts.
 */
const MEASURED_LOOPS = 5;

/**
 * Calls of the retained figure's loop, however short the run: what a loop leaves behind that
 * is not the calls' (compiled code) is spread over enough calls to stay under a byte a call.
 */
const RETAINED_CALLS = 100_000;

/** Set when the child starts: --expose-gc is needed. */
let gcLog: GcLog;

/** Bytes allocated per call: the least allocating of MEASURED_LOOPS loops after a warm-up. */
async function allocated(
  candidate: Candidate,
  mode: Mode,
  count: number,
): Promise<[bytesPerCall: number, gcs: number]> {
  const guard = candidate.make();
  await calls(guard, mode, count); // warm-up: compiled code and inline caches are not the calls'
  let least: [number, number] = [Number.POSITIVE_INFINITY, 0];
  for (let i = 0; i < MEASURED_LOOPS; i++) {
    forceGc();
    const before = usedHeap();
    const start = performance.now();
    await calls(guard, mode, count);
    const end = performance.now();
    const bytesPerCall = (usedHeap() - before) / count;
    await wait(20); // the GC observer reports asynchronously
    if (bytesPerCall < least[0]) least = [bytesPerCall, gcLog.countBetween(start, end)];
  }
  guard.shutdown?.();
  return least;
}

/**
 * Bytes a new breaker keeps per call after `count` calls and a full GC. A fresh one, because
 * what grows with the calls (opossum's own Status keeps a latency per call until its bucket
 * is dropped) grows in steps: measured on one already used, a loop may fit in what an earlier
 * one reserved and show nothing.
 */
async function retained(candidate: Candidate, mode: Mode, count: number): Promise<number> {
  const guard = candidate.make();
  forceGc();
  const before = usedHeap();
  await calls(guard, mode, count);
  forceGc();
  const bytesPerCall = (usedHeap() - before) / count;
  guard.shutdown?.();
  return bytesPerCall;
}

async function measure(candidate: Candidate, mode: Mode, count: number): Promise<AllocationFigures> {
  const [allocatedBytesPerCall, gcsDuringLoop] = await allocated(candidate, mode, count);
  const retainedBytesPerCall = await retained(candidate, mode, RETAINED_CALLS);
  return { candidate: candidate.name, mode, calls: count, allocatedBytesPerCall, retainedBytesPerCall, gcsDuringLoop };
}

async function allocationChild(count: number): Promise<void> {
  gcLog = new GcLog();
  const figures: AllocationFigures[] = [];
  for (const mode of MODES) {
    for (const candidate of CANDIDATES) figures.push(await measure(candidate, mode, count));
  }
  gcLog.stop();
  sendResult(figures);
}

if (require.main === module) {
  exitWithParent();
  allocationChild(option('calls', 10_000, 1)).then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`allocation child failed: ${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
}
