import type { TimerHandle } from '../common';
import type { Abortable } from './abortable';
import type { FairQueueNode, TenantQueue } from './fair-queue';
import type { LaneWork } from './lane.types';

export type JobState = 'queued' | 'running' | 'finished';

/**
 * One accepted call. While it waits it is linked into the lane's fair queue; while it runs,
 * into the lane's list of running jobs (the same two link fields; a job is in one list at a time).
 */
export class LaneJob implements FairQueueNode<LaneJob> {
  prev: LaneJob | undefined = undefined;
  next: LaneJob | undefined = undefined;
  owner: TenantQueue<LaneJob> | undefined = undefined;

  state: JobState = 'queued';
  /** The caller has its answer; later outcomes of the handler are only bookkeeping. */
  settled = false;
  /** The lane itself aborted this job (shutdown), so the abort is not the caller's. */
  stoppedByLane = false;
  enqueuedAt = 0;
  timer: TimerHandle = undefined;
  detachAbort: (() => void) | undefined = undefined;

  constructor(
    readonly work: LaneWork,
    readonly tenant: string,
    readonly abort: Abortable | undefined,
  ) {}

  /** The work settled; its caller hears it unless it was answered already. */
  finish(outcome: unknown, succeeded: boolean): void {
    if (this.settled) return;
    this.settled = true;
    this.work.done?.(outcome, succeeded);
  }

  /** Answers the caller without the work's outcome (expired, cancelled, stopped), once. */
  refuse(reason: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.work.refuse(reason);
  }
}

/** A task run by {@link Lane.run}: its caller's promise settles with the task's outcome. */
export class PromisedTask<T> implements LaneWork {
  readonly promise: Promise<T>;
  private resolveCaller!: (value: T) => void;
  private rejectCaller!: (reason: unknown) => void;

  constructor(private readonly task: () => T | PromiseLike<T>) {
    this.promise = new Promise<T>((resolve, reject) => {
      this.resolveCaller = resolve;
      this.rejectCaller = reject;
    });
  }

  start(): T | PromiseLike<T> {
    return this.task();
  }

  done(outcome: unknown, succeeded: boolean): void {
    if (succeeded) this.resolveCaller(outcome as T);
    else this.rejectCaller(outcome);
  }

  refuse(reason: unknown): void {
    this.rejectCaller(reason);
  }
}
