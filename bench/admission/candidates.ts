/**
 * What the admission benchmark compares: each candidate limits to LIMIT concurrent calls of a
 * task that returns an already resolved promise, called one at a time or in bursts of BURST.
 */
import { setTimeout as wait } from 'node:timers/promises';
import { bulkhead } from 'cockatiel';
import pLimit from 'p-limit';
import PQueue from 'p-queue';
import type { Clock } from '../../src/common';
import { built } from '../support/built';
import { Semaphore } from '../support/semaphore';

const { Lane } = built<typeof import('../../src/bulkhead/lane')>('bulkhead/lane');
const { SystemClock } = built<typeof import('../../src/common')>('common');
const { FakeClock } = built<typeof import('../../src/common/fake-clock')>('common/fake-clock');

export const LIMIT = 8;
export const BURST = 100;
/** Calls per tinybench iteration, so that its per-iteration timing costs next to nothing. */
export const CALLS_PER_ITERATION = 1_000;

export type Mode = 'uncontended' | 'bursts';
export type Task = () => Promise<number>;
export type Run = (task: Task) => PromiseLike<unknown>;

const DONE = Promise.resolve(1);
export const immediate: Task = () => DONE;

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

export interface Candidate {
  name: string;
  make(mode: Mode): Run;
}

export const BASELINE = 'semaphore';
export const LANE = 'lane';
export const CANDIDATES: Candidate[] = [
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

export async function oneAtATime(run: Run): Promise<void> {
  for (let i = 0; i < CALLS_PER_ITERATION; i++) await run(immediate);
}

export async function inBursts(run: Run): Promise<void> {
  const burst = new Array<PromiseLike<unknown>>(BURST);
  for (let b = 0; b < CALLS_PER_ITERATION / BURST; b++) {
    for (let i = 0; i < BURST; i++) burst[i] = run(immediate);
    await Promise.all(burst);
  }
}

/** Fails unless `run` lets exactly LIMIT of a burst run at once and completes all of it. */
export async function checkLimit(name: string, run: Run): Promise<void> {
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
