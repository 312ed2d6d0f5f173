import { type Clock, ResilienceError } from '../common';
import type { AdaptiveLimit } from './adaptive';
import { ClassedQueue } from './classed-queue';
import { type LaneJob, PromisedJob, WorkJob } from './lane-job';
import type { LaneCall, LaneOptions, LaneRejection, LaneSnapshot, LaneStats, LaneWork } from './lane.types';
import { QueueExpiry } from './queue-expiry';
import { DEFAULT_QUEUE_TTL_MS } from './lane.options';
import { rankOf, STANDARD_RANK } from './priority';

const DEFAULT_TENANT = '';
const UNKNOWN_WAIT_RETRY_MS = 1_000;
const MAX_RETRY_AFTER_MS = 60_000;

/**
 * A bulkhead lane: at most C calls run and at most Q wait, FIFO per tenant, round-robin
 * across tenants. Admission is synchronous and O(1): a call starts now, waits, or is refused
 * with a {@link LaneRejection} string, and a refusal allocates no promise, timer or job.
 *
 * Waiting calls have a priority class (`critical`, `standard`, `sheddable`): a higher class
 * starts first (tenants take turns inside it), and a call that finds the queue full takes the
 * place of the newest waiting call of the lowest class below its own, which is refused
 * `queue_full` at once, as if it had come last.
 *
 * An adaptive lane moves C (its limit) with what its calls show, from `concurrency` on within
 * the algorithm's bounds, and Q in proportion. Each call that ends is a sample: how long it
 * held its slot on the injected clock, how many ran when it started, and whether it timed out;
 * a call whose caller left, or that the lane stopped, is none. A lower limit stops admissions
 * until fewer run than it allows; calls already running or waiting are never dropped for it.
 *
 * A waiting call leaves the queue the moment its queue TTL passes (`queue_expired`) or its
 * caller aborts; its task never runs. A running call keeps its slot until its task settles,
 * even if the caller aborted: the downstream work has not stopped until then.
 */
export class Lane {
  readonly name: string;
  readonly concurrency: number;
  readonly queueCapacity: number;
  readonly queueTtlMs: number;
  readonly maxQueuedPerTenant: number;

  private readonly clock: Clock;
  private readonly adaptive: AdaptiveLimit | undefined;
  /** Calls that may run at once now: `concurrency`, or the adaptive limit's last value. */
  private limit: number;
  /** Calls that may wait now: `queueCapacity`, scaled by `limit / concurrency` in an adaptive lane. */
  private queueLimit: number;
  private readonly queue = new ClassedQueue<LaneJob>();
  private readonly expiry: QueueExpiry<LaneJob>;
  private active = 0;
  private peakActive = 0;
  private closed = false;
  private runningHead: LaneJob | undefined;
  private idleWaiters: Array<() => void> = [];
  private queueWaitListeners: Array<(waitMs: number) => void> = [];
  /** Moving average of how long recently started calls waited; the basis of Retry-After. */
  private recentWaitMs: number | undefined;
  private readonly counts: LaneStats = {
    accepted: 0,
    queueFull: 0,
    tenantQueueFull: 0,
    stopped: 0,
    cancelledQueued: 0,
    cancelledRunning: 0,
    expired: 0,
    displaced: 0,
  };

  constructor(options: LaneOptions) {
    const { name, concurrency, queueCapacity } = options;
    const queueTtlMs = options.queueTtlMs ?? DEFAULT_QUEUE_TTL_MS;
    const maxQueuedPerTenant = options.maxQueuedPerTenant ?? Math.max(queueCapacity, 1);
    if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
      throw new RangeError(`lane '${name}': concurrency must be an integer of at least 1`);
    }
    if (!Number.isSafeInteger(queueCapacity) || queueCapacity < 0) {
      throw new RangeError(`lane '${name}': queueCapacity must be an integer of at least 0`);
    }
    if (!isPositiveFinite(queueTtlMs)) {
      throw new RangeError(`lane '${name}': queueTtlMs must be a positive finite number`);
    }
    if (!Number.isSafeInteger(maxQueuedPerTenant) || maxQueuedPerTenant < 1) {
      throw new RangeError(`lane '${name}': maxQueuedPerTenant must be an integer of at least 1`);
    }
    this.name = name;
    this.concurrency = concurrency;
    this.queueCapacity = queueCapacity;
    this.queueTtlMs = queueTtlMs;
    this.maxQueuedPerTenant = maxQueuedPerTenant;
    this.clock = options.clock;
    this.adaptive = options.adaptive;
    this.limit = concurrency;
    this.queueLimit = queueCapacity;
    if (this.adaptive) this.follow(this.adaptive.limit);
    this.expiry = new QueueExpiry(this.clock, (job) => this.expire(job));
  }

  /**
   * Runs `task` in this lane: now if a slot is free, later if the queue has room, or not at
   * all (the returned rejection string). The promise settles exactly once with the task's
   * outcome, or rejects with `queue_expired`, the caller's abort reason, or the lane's stop
   * reason.
   */
  run<T>(task: () => T | PromiseLike<T>, call?: LaneCall): Promise<T> | LaneRejection {
    if (this.startsNow()) {
      const abort = call?.abort;
      if (abort?.aborted) return Promise.reject(abort.reason);
      const job = new PromisedJob(task, call?.tenant ?? DEFAULT_TENANT, abort);
      this.counts.accepted++;
      this.start(job, 0);
      return job.promise;
    }
    const admission = this.decide(call);
    if (admission === 'aborted') return Promise.reject(call!.abort!.reason);
    if (admission !== 'wait') return admission;
    const job = new PromisedJob(task, call?.tenant ?? DEFAULT_TENANT, call?.abort);
    this.enqueue(job, call);
    return job.promise;
  }

  /**
   * Admits `work` like {@link run}, without a promise: the lane tells the work itself when it
   * starts, settles or is refused (a caller that aborted already is refused at once).
   * Undefined once accepted (or refused for its abort); the rejection string otherwise.
   */
  admit(work: LaneWork, call?: LaneCall): LaneRejection | undefined {
    if (this.startsNow()) {
      const abort = call?.abort;
      if (abort?.aborted) {
        work.refuse(abort.reason);
      } else {
        this.counts.accepted++;
        this.start(new WorkJob(work, call?.tenant ?? DEFAULT_TENANT, abort), 0);
      }
      return undefined;
    }
    const admission = this.decide(call);
    if (admission === 'aborted') {
      work.refuse(call!.abort!.reason);
      return undefined;
    }
    if (admission !== 'wait') return admission;
    this.enqueue(new WorkJob(work, call?.tenant ?? DEFAULT_TENANT, call?.abort), call);
    return undefined;
  }

  /**
   * Whether a call starts at once (unless its caller aborted already): the lane is open and a
   * slot is free. Waiting calls exist only while every slot is busy, so nobody is ahead of it.
   */
  private startsNow(): boolean {
    return this.active < this.limit && !this.closed;
  }

  /**
   * What admission does with a call that cannot start now (the lane is closed or every slot is
   * busy), decided at once; refusals are counted here and allocate nothing.
   */
  private decide(call: LaneCall | undefined): LaneRejection | 'aborted' | 'wait' {
    if (this.closed) {
      this.counts.stopped++;
      return 'stopped';
    }
    if (call?.abort?.aborted) return 'aborted';
    const tenant = call?.tenant ?? DEFAULT_TENANT;
    // A full queue makes room only by displacing a waiting call of a lower class.
    const displaced = this.queue.size >= this.queueLimit ? this.queue.newestBelow(rankOf(call?.priority)) : undefined;
    if (this.queue.size >= this.queueLimit && displaced === undefined) {
      this.counts.queueFull++;
      return 'queue_full';
    }
    const tenantWaiting = this.queue.sizeOf(tenant) - (displaced?.tenant === tenant ? 1 : 0);
    if (tenantWaiting >= this.maxQueuedPerTenant) {
      this.counts.tenantQueueFull++;
      return 'tenant_queue_full';
    }
    if (displaced) this.displace(displaced, 'a call of a higher class took its place');
    return 'wait';
  }

  /** Refuses a waiting call `queue_full` at once, as if it had come last: its place goes to another. */
  private displace(job: LaneJob, why: string): void {
    this.queue.remove(job);
    this.leaveQueue(job);
    job.state = 'finished';
    this.counts.displaced++;
    job.refuse(
      new ResilienceError('queue_full', `lane '${this.name}' is full: ${why}`, { retryAfterMs: this.retryAfterMs() }),
    );
  }

  private enqueue(job: LaneJob, call: LaneCall | undefined): void {
    job.rank = rankOf(call?.priority);
    const queueTtlMs = call?.queueTtlMs ?? this.queueTtlMs;
    if (!isPositiveFinite(queueTtlMs)) throw new RangeError('queueTtlMs must be a positive finite number');
    const now = this.clock.now();
    job.enqueuedAt = now;
    job.queueTtlMs = queueTtlMs;
    this.expiry.add(job, queueTtlMs, now);
    const { abort } = job;
    if (abort) job.detachAbort = abort.onAbort((reason) => this.cancelWaiting(job, reason));
    this.queue.push(job);
    this.counts.accepted++;
  }

  snapshot(): LaneSnapshot {
    const snapshot: LaneSnapshot = {
      active: this.active,
      waiting: this.queue.size,
      waitingByClass: {
        critical: this.queue.sizeOfClass(0),
        standard: this.queue.sizeOfClass(1),
        sheddable: this.queue.sizeOfClass(2),
      },
      concurrency: this.concurrency,
      queueCapacity: this.queueCapacity,
      peakActive: this.peakActive,
    };
    const { adaptive } = this;
    if (adaptive) {
      snapshot.limit = this.limit;
      snapshot.queueLimit = this.queueLimit;
      snapshot.adaptive = { algorithm: adaptive.algorithm, min: adaptive.min, max: adaptive.max };
    }
    return snapshot;
  }

  /** Calls running now: `snapshot().active` without building a snapshot (a refusal's message reads it). */
  get running(): number {
    return this.active;
  }

  /** Calls waiting now, in every class: `snapshot().waiting` without building a snapshot. */
  get waiting(): number {
    return this.queue.size;
  }

  /** Calls that may run at once now: `concurrency` unless the lane is adaptive. */
  get currentLimit(): number {
    return this.limit;
  }

  /** Calls that may wait now: `queueCapacity` unless the lane is adaptive. */
  get currentQueueLimit(): number {
    return this.queueLimit;
  }

  stats(): Readonly<LaneStats> {
    return this.counts;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** A useful wait before trying again after a refusal, from how long calls lately waited. */
  retryAfterMs(): number {
    const recent = this.recentWaitMs ?? UNKNOWN_WAIT_RETRY_MS;
    return Math.min(MAX_RETRY_AFTER_MS, Math.max(UNKNOWN_WAIT_RETRY_MS, Math.ceil(recent)));
  }

  /** Calls `listener` with the queue wait of every call that starts (0 when it did not wait). */
  onQueueWait(listener: (waitMs: number) => void): () => void {
    this.queueWaitListeners.push(listener);
    return () => {
      const index = this.queueWaitListeners.indexOf(listener);
      if (index !== -1) this.queueWaitListeners.splice(index, 1);
    };
  }

  /** Stops admission: later calls are refused `stopped`; accepted ones go on. */
  close(): void {
    this.closed = true;
  }

  /** Resolves when nothing runs or waits. */
  whenIdle(): Promise<void> {
    if (this.active === 0 && this.queue.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Closes the lane and ends every accepted call now: waiting ones are removed and running
   * ones aborted, and all their callers are answered with `reason`. Running tasks keep their
   * slots until they settle, as always.
   */
  stopNow(reason: unknown): void {
    this.closed = true;
    for (let job = this.queue.shift(); job; job = this.queue.shift()) {
      this.leaveQueue(job);
      job.state = 'finished';
      job.refuse(reason);
    }
    for (let job = this.runningHead; job; job = job.next) {
      // A caller that left before the stop still counts as a caller cancellation.
      if (!job.abort?.aborted) job.stoppedByLane = true;
      job.refuse(reason);
      job.abort?.abort(reason);
    }
    this.notifyIfIdle();
  }

  private start(job: LaneJob, waitMs: number): void {
    job.state = 'running';
    this.active++;
    if (this.active > this.peakActive) this.peakActive = this.active;
    this.linkRunning(job);
    if (this.adaptive) {
      job.startedAt = this.clock.now();
      job.inFlightAtStart = this.active;
    }
    const listeners = this.queueWaitListeners;
    for (let i = 0; i < listeners.length; i++) listeners[i]!(waitMs);
    let outcome: PromiseLike<unknown>;
    try {
      outcome = Promise.resolve(job.start());
    } catch (error) {
      outcome = Promise.reject(error);
    }
    // Settling later, never inside start(), keeps pump() free of re-entry.
    outcome.then(
      (value) => this.finish(job, value, true),
      (error: unknown) => this.finish(job, error, false),
    );
  }

  private finish(job: LaneJob, outcome: unknown, succeeded: boolean): void {
    this.unlinkRunning(job);
    job.state = 'finished';
    this.active--;
    if (job.abort?.aborted && !job.stoppedByLane) this.counts.cancelledRunning++;
    job.finish(outcome, succeeded);
    if (this.adaptive) this.learn(this.adaptive, job, outcome, succeeded);
    if (this.queue.size !== 0) this.pump();
    this.notifyIfIdle();
  }

  /** An adaptive lane's limit takes in how `job` ended, unless its time says nothing of the dependency. */
  private learn(adaptive: AdaptiveLimit, job: LaneJob, outcome: unknown, succeeded: boolean): void {
    if (job.abort?.aborted || job.stoppedByLane) return;
    const signal = job.limitSignal(outcome, succeeded);
    if (signal === 'ignore') return;
    adaptive.onSample(this.clock.now() - job.startedAt, job.inFlightAtStart, signal === 'drop');
    if (adaptive.limit !== this.limit) this.follow(adaptive.limit);
  }

  /**
   * Takes `limit` as the lane's, the queue's bound in proportion (at least 1 where it had room).
   * A queue left over its new bound sheds its newest `sheddable` calls down to it; calls of the
   * other classes are never dropped for it, and wait.
   */
  private follow(limit: number): void {
    this.limit = limit;
    this.queueLimit =
      this.queueCapacity === 0 ? 0 : Math.max(1, Math.round((this.queueCapacity * limit) / this.concurrency));
    while (this.queue.size > this.queueLimit) {
      const sheddable = this.queue.newestBelow(STANDARD_RANK);
      if (!sheddable) break;
      this.displace(sheddable, `its limit fell to ${limit}, and sheddable calls go first`);
    }
  }

  /** Starts waiting calls while slots are free. */
  private pump(): void {
    while (this.active < this.limit) {
      const job = this.queue.shift();
      if (!job) return;
      this.leaveQueue(job);
      const waitMs = this.clock.now() - job.enqueuedAt;
      this.recentWaitMs = this.recentWaitMs === undefined ? waitMs : this.recentWaitMs * 0.8 + waitMs * 0.2;
      this.start(job, waitMs);
    }
  }

  private expire(job: LaneJob): void {
    if (job.state !== 'queued') return;
    this.queue.remove(job);
    this.leaveQueue(job);
    job.state = 'finished';
    this.counts.expired++;
    job.refuse(
      new ResilienceError('queue_expired', `waited ${job.queueTtlMs} ms in lane '${this.name}' without a free slot`),
    );
    this.notifyIfIdle();
  }

  private cancelWaiting(job: LaneJob, reason: unknown): void {
    if (job.state !== 'queued') return;
    job.detachAbort = undefined;
    this.queue.remove(job);
    this.leaveQueue(job);
    job.state = 'finished';
    this.counts.cancelledQueued++;
    job.refuse(reason);
    this.notifyIfIdle();
  }

  /** Drops what a waiting job held: its queue TTL (the lane's timer, once none waits) and its abort listener. */
  private leaveQueue(job: LaneJob): void {
    this.expiry.remove(job, this.queue.size === 0);
    if (job.detachAbort) {
      job.detachAbort();
      job.detachAbort = undefined;
    }
  }

  private linkRunning(job: LaneJob): void {
    job.prev = undefined;
    job.next = this.runningHead;
    if (this.runningHead) this.runningHead.prev = job;
    this.runningHead = job;
  }

  private unlinkRunning(job: LaneJob): void {
    if (job.prev) job.prev.next = job.next;
    else this.runningHead = job.next;
    if (job.next) job.next.prev = job.prev;
    job.prev = job.next = undefined;
  }

  private notifyIfIdle(): void {
    if (this.active !== 0 || this.queue.size !== 0 || this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

function isPositiveFinite(value: number): boolean {
  return typeof value === 'number' && value > 0 && Number.isFinite(value);
}
