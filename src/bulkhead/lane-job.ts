import type { Abortable } from './abortable';
import type { DeadlineList, DeadlineNode } from './deadline-lists';
import type { ClassedQueueNode } from './classed-queue';
import type { TenantQueue } from './fair-queue';
import { type PriorityRank, STANDARD_RANK } from './priority';
import type { LaneWork, LimitSignal } from './lane.types';
import { limitSignalOf } from './limit-signal';

export type JobState = 'queued' | 'running' | 'finished';

/**
 * One accepted call. While it waits it is linked into the lane's fair queue and its deadline
 * lists; while it runs, into the lane's list of running jobs (the fair queue's two link
 * fields; a job is in one of those lists at a time). What it runs, and how its caller hears
 * the outcome, is the subclass's: {@link WorkJob} for {@link Lane.admit}, {@link PromisedJob}
 * for {@link Lane.run}; either way one object per call.
 */
export abstract class LaneJob implements ClassedQueueNode<LaneJob>, DeadlineNode<LaneJob> {
  prev: LaneJob | undefined = undefined;
  next: LaneJob | undefined = undefined;
  owner: TenantQueue<LaneJob> | undefined = undefined;
  /** Its priority class's rank, and its place in its class's arrival order while it waits. */
  rank: PriorityRank = STANDARD_RANK;
  arrivalPrev: LaneJob | undefined = undefined;
  arrivalNext: LaneJob | undefined = undefined;
  // Set only once it waits (when its queue TTL passes; its place among the waiting jobs of its
  // TTL): a call that starts at once, the common case, is not built with them.
  deadline!: number;
  deadlinePrev: LaneJob | undefined;
  deadlineNext: LaneJob | undefined;
  deadlineList: DeadlineList<LaneJob> | undefined;

  state: JobState = 'queued';
  /** The caller has its answer; later outcomes of the handler are only bookkeeping. */
  settled = false;
  /** The lane itself aborted this job (shutdown), so the abort is not the caller's. */
  stoppedByLane = false;
  enqueuedAt!: number;
  queueTtlMs!: number;
  // Set only in an adaptive lane, as it starts: what its limit learns from the call when it ends.
  startedAt!: number;
  inFlightAtStart!: number;
  detachAbort: (() => void) | undefined;

  constructor(
    readonly tenant: string,
    readonly abort: Abortable | undefined,
  ) {}

  /** Runs the call's work; the slot is held until what it returns settles. */
  abstract start(): unknown;

  /** The work settled; its caller hears it unless it was answered already. */
  finish(outcome: unknown, succeeded: boolean): void {
    if (this.settled) return;
    this.settled = true;
    this.answer(outcome, succeeded);
  }

  /** Answers the caller without the work's outcome (expired, cancelled, stopped), once. */
  refuse(reason: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.refused(reason);
  }

  /** What the work's outcome tells an adaptive limit. */
  limitSignal(outcome: unknown, succeeded: boolean): LimitSignal {
    return limitSignalOf(outcome, succeeded);
  }

  protected abstract answer(outcome: unknown, succeeded: boolean): void;
  protected abstract refused(reason: unknown): void;
}

/** A job of {@link Lane.admit}: the caller's {@link LaneWork} hears everything itself. */
export class WorkJob extends LaneJob {
  constructor(
    private readonly work: LaneWork,
    tenant: string,
    abort: Abortable | undefined,
  ) {
    super(tenant, abort);
  }

  start(): unknown {
    return this.work.start();
  }

  override limitSignal(outcome: unknown, succeeded: boolean): LimitSignal {
    return this.work.limitSignal ? this.work.limitSignal(outcome, succeeded) : limitSignalOf(outcome, succeeded);
  }

  protected answer(outcome: unknown, succeeded: boolean): void {
    this.work.done?.(outcome, succeeded);
  }

  protected refused(reason: unknown): void {
    this.work.refuse(reason);
  }
}

/** A job of {@link Lane.run}: its caller's promise settles with the task's outcome. */
export class PromisedJob<T> extends LaneJob {
  readonly promise: Promise<T>;
  private resolveCaller!: (value: T) => void;
  private rejectCaller!: (reason: unknown) => void;

  constructor(
    private readonly task: () => T | PromiseLike<T>,
    tenant: string,
    abort: Abortable | undefined,
  ) {
    super(tenant, abort);
    this.promise = new Promise<T>((resolve, reject) => {
      this.resolveCaller = resolve;
      this.rejectCaller = reject;
    });
  }

  start(): T | PromiseLike<T> {
    return this.task();
  }

  protected answer(outcome: unknown, succeeded: boolean): void {
    if (succeeded) this.resolveCaller(outcome as T);
    else this.rejectCaller(outcome);
  }

  protected refused(reason: unknown): void {
    this.rejectCaller(reason);
  }
}
