import type { TimerHandle } from '../common';
import type { Abortable } from './abortable';
import type { FairQueueNode, TenantQueue } from './fair-queue';

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

  readonly promise: Promise<unknown>;
  private resolveCaller!: (value: unknown) => void;
  private rejectCaller!: (reason: unknown) => void;

  constructor(
    readonly task: () => unknown,
    readonly tenant: string,
    readonly abort: Abortable | undefined,
  ) {
    this.promise = new Promise((resolve, reject) => {
      this.resolveCaller = resolve;
      this.rejectCaller = reject;
    });
  }

  resolve(value: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.resolveCaller(value);
  }

  reject(reason: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.rejectCaller(reason);
  }
}
