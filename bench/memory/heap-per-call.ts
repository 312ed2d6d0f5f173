/**
 * Part 1 of the memory benchmark, in a process of its own started with --expose-gc (by
 * bench/memory.ts): one call runs and never settles, `--queued N` more wait behind it; heap
 * used after a forced GC, minus before, divided by N is the bytes one waiting call holds
 * (whatever the caller keeps, its promise, is counted once, in a slot of an array allocated
 * before the measurement). Rows:
 *   - pending promise: `new Promise(() => {})`, the baseline; every row is also given as a
 *     ratio to it;
 *   - promise + its resolvers: the least any queue must hold (a promise to hand out and the
 *     functions that settle it);
 *   - lane: concurrency 1, queueCapacity N, with the SystemClock the service runs with (the
 *     lane's one queue-TTL timer is a real Node timer);
 *   - lane, no TTL timers: the same with a clock whose timers are no-ops;
 *   - the same N waiting in cockatiel 3's `bulkhead(1, N)`, p-limit(1) and a hand-written
 *     async/await semaphore, for comparison.
 * Also given: drain ms, from releasing the running call until all N have run. An array
 * FIFO's `shift()` copies the whole array once it is too big for V8 to trim in place (over
 * 128 kB, about 32,000 entries), so draining a queue that long is quadratic there.
 */
import { getHeapStatistics } from 'node:v8';
import { bulkhead } from 'cockatiel';
import pLimit from 'p-limit';
import type { Clock } from '../../src/common';
import { built } from '../support/built';
import { option } from '../support/options';
import { exitWithParent, sendResult } from '../support/processes';
import { Semaphore } from '../support/semaphore';

const { Lane } = built<typeof import('../../src/bulkhead/lane')>('bulkhead/lane');
const { SystemClock } = built<typeof import('../../src/common')>('common');

const QUEUED = option('queued', 100_000, 1);

/** One row: what waits, the heap one waiting call holds, and how long draining took. */
export interface QueuedRow {
  name: string;
  bytesPerCall: number;
  drainMs: number;
  vsPendingPromise: number;
}

function forceGc(): void {
  const gc = (globalThis as { gc?: () => void }).gc!;
  gc();
  gc();
}

const usedHeap = () => getHeapStatistics().used_heap_size;
const immediate = () => 1;
const noop = () => undefined;

/** A clock whose timers never fire: what the lane itself holds, without its TTL timers. */
class NoTimerClock implements Clock {
  private readonly system = new SystemClock();
  now = () => this.system.now();
  wallNow = () => this.system.wallNow();
  setTimer = () => undefined;
  clearTimer = noop;
}

/** A call that runs until `release()`: what keeps the limiter full while the others wait. */
function holder() {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  return { task: () => held, release };
}

interface Filler {
  name: string;
  /**
   * Puts QUEUED waiting calls in `slots` (and `extra`, if it needs a second reference per
   * call); returns what settles them all.
   */
  fill(slots: unknown[], extra: unknown[]): () => Promise<unknown>;
}

function laneFiller(name: string, clock: Clock): Filler {
  return {
    name,
    fill: (slots) => {
      const lane = new Lane({ name: 'queued', concurrency: 1, queueCapacity: QUEUED, clock });
      const running = holder();
      lane.run(running.task);
      for (let i = 0; i < QUEUED; i++) slots[i] = lane.run(immediate);
      const { active, waiting } = lane.snapshot();
      if (active !== 1 || waiting !== QUEUED) throw new Error(`${name}: ${active} running, ${waiting} waiting`);
      return () => {
        running.release();
        return lane.whenIdle();
      };
    },
  };
}

const FILLERS: Filler[] = [
  {
    name: 'pending promise (baseline)',
    fill: (slots) => {
      for (let i = 0; i < QUEUED; i++) slots[i] = new Promise(noop);
      return () => Promise.resolve();
    },
  },
  {
    name: 'promise + its resolvers',
    fill: (slots, extra) => {
      for (let i = 0; i < QUEUED; i++) slots[i] = new Promise((resolve) => (extra[i] = resolve));
      return () => Promise.resolve();
    },
  },
  laneFiller('lane', new SystemClock()),
  laneFiller('lane, no TTL timers', new NoTimerClock()),
  {
    name: `cockatiel bulkhead(1, ${QUEUED})`,
    fill: (slots) => {
      const policy = bulkhead(1, QUEUED);
      const running = holder();
      void policy.execute(running.task);
      for (let i = 0; i < QUEUED; i++) slots[i] = policy.execute(immediate);
      return () => {
        running.release();
        return Promise.all(slots);
      };
    },
  },
  {
    name: 'p-limit(1)',
    fill: (slots) => {
      const limit = pLimit(1);
      const running = holder();
      void limit(running.task);
      for (let i = 0; i < QUEUED; i++) slots[i] = limit(immediate);
      return () => {
        running.release();
        return Promise.all(slots);
      };
    },
  },
  {
    name: 'semaphore (async/await)',
    fill: (slots) => {
      const semaphore = new Semaphore(1);
      const running = holder();
      void semaphore.run(running.task);
      for (let i = 0; i < QUEUED; i++) slots[i] = semaphore.run(immediate);
      return () => {
        running.release();
        return Promise.all(slots);
      };
    },
  },
];

async function heapPerQueuedCall(): Promise<QueuedRow[]> {
  // Allocated once, before any measurement, so that no row pays for the array holding its calls.
  const slots = new Array<unknown>(QUEUED).fill(null);
  const extra = new Array<unknown>(QUEUED).fill(null);
  const rows: Array<{ name: string; bytesPerCall: number; drainMs: number }> = [];
  for (const filler of FILLERS) {
    forceGc();
    const before = usedHeap();
    const settle = filler.fill(slots, extra);
    // Let what a limiter does a microtask later (p-limit enqueues then) happen first.
    await new Promise((done) => setImmediate(done));
    forceGc();
    const after = usedHeap();
    const drainStarted = performance.now();
    await settle();
    const drainMs = performance.now() - drainStarted;
    rows.push({ name: filler.name, bytesPerCall: (after - before) / QUEUED, drainMs });
    slots.fill(null);
    extra.fill(null);
  }
  const baseline = rows[0]!.bytesPerCall;
  return rows.map((row) => ({ ...row, vsPendingPromise: row.bytesPerCall / baseline }));
}

exitWithParent();
if (typeof (globalThis as { gc?: unknown }).gc !== 'function') throw new Error('run with --expose-gc');
heapPerQueuedCall().then(
  (rows) => {
    sendResult(rows);
    process.exit(0);
  },
  (error: unknown) => {
    process.stderr.write(`heap per queued call failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
