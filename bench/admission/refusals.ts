/**
 * The admission benchmark's rejection path, in a process of its own started with --expose-gc
 * and a 64 MB young generation (so that an allocation of even a few bytes per refusal would
 * stay visible in the heap instead of being swept by a scavenge mid-loop): a lane of
 * concurrency 1 and queue 0, occupied by a call that never settles, refuses `--refusals N`
 * calls (`run()` returns 'queue_full'); the same around an empty loop (what the measuring
 * itself allocates) and, as the control, cockatiel's refusals (CONTROL_REFUSALS of them).
 */
import { setTimeout as wait } from 'node:timers/promises';
import { bulkhead } from 'cockatiel';
import { built } from '../support/built';
import { forceGc, GcLog, usedHeap } from '../support/heap';
import { option } from '../support/options';
import { exitWithParent, sendResult } from '../support/processes';
import { immediate } from './candidates';

const { Lane } = built<typeof import('../../src/bulkhead/lane')>('bulkhead/lane');
const { SystemClock } = built<typeof import('../../src/common')>('common');

/** Node options of the process this runs in. */
export const REFUSALS_NODE_ARGS = ['--expose-gc', '--min-semi-space-size=64', '--max-semi-space-size=64'];
export const CONTROL_REFUSALS = 50_000;

export interface RefusalFigures {
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

export interface RejectionFigures {
  /** The same procedure around a loop that calls nothing: what the measuring itself allocates. */
  emptyLoop: RefusalFigures;
  lane: RefusalFigures;
  cockatiel: RefusalFigures;
}

/** Set when the child starts: --expose-gc is needed. */
let gcLog: GcLog;

/**
 * Occasional heap growth that has nothing to do with the calls (code of an optimisation that
 * finished on a background thread mid-loop, more often on a loaded machine) adds up to a few
 * hundred kB to one loop; a per-call allocation adds to every loop. So each loop is measured
 * this many times and the least allocating one counts.
 */
const MEASURED_LOOPS = 5;

/** Heap used before, right after (no GC between) and after a forced GC, around `refuse(calls)`. */
async function measureLoop(calls: number, refuse: (calls: number) => void | Promise<void>): Promise<RefusalFigures> {
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
    gcsDuringLoop: gcLog.countBetween(start, end),
  };
}

/** The least allocating of MEASURED_LOOPS loops, after a warm-up, with the median time of all. */
async function measureRefusals(
  calls: number,
  refuse: (calls: number) => void | Promise<void>,
): Promise<RefusalFigures> {
  await refuse(calls); // warm-up: compiled code and inline caches are not the lane's allocation
  const loops: RefusalFigures[] = [];
  for (let i = 0; i < MEASURED_LOOPS; i++) loops.push(await measureLoop(calls, refuse));
  const times = loops.map((loop) => loop.nsPerRefusal).sort((a, b) => a - b);
  const leastAllocating = loops.reduce((least, loop) => (loop.allocatedBytes < least.allocatedBytes ? loop : least));
  return { ...leastAllocating, nsPerRefusal: times[Math.floor(times.length / 2)] };
}

async function rejectionChild(refusals: number): Promise<void> {
  gcLog = new GcLog();

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
  gcLog.stop();
  const expected = (1 + MEASURED_LOOPS) * CONTROL_REFUSALS;
  if (rejected !== expected) throw new Error(`cockatiel rejected ${rejected} of ${expected}`);
  sendResult({ emptyLoop, lane: laneFigures, cockatiel: cockatielFigures } satisfies RejectionFigures);
}

if (require.main === module) {
  exitWithParent();
  rejectionChild(option('refusals', 1_000_000, 1)).then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`rejection child failed: ${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
}
