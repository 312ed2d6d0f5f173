import fc from 'fast-check';
import { LazyAbortController, ResilienceError } from '../common';
import { FakeClock, settle } from '../common/fake-clock';
import { deferred, type Deferred } from '../../test/support/deferred';
import { Lane } from './lane';
import type { LaneRejection, LaneStats } from './lane.types';
import { type PriorityClass, type PriorityRank, rankOf } from './priority';

/** Random interleavings checked per test run; the closing note quotes this figure. */
const NUM_RUNS = 3000;
/** Most commands in one interleaving (the final drain adds a few more checked steps). */
const MAX_STEPS = 40;
const TENANTS = ['a', 'b', 'c'] as const;
/** The longest queue TTL a lane or a call gets; the final drain moves the clock past it. */
const MAX_TTL_MS = 500;

interface LaneShape {
  concurrency: number;
  queueCapacity: number;
  maxQueuedPerTenant: number;
  queueTtlMs: number;
}

type Step =
  | {
      kind: 'submit';
      tenant: string;
      priority: PriorityClass;
      queueTtlMs: number | undefined;
      abortable: boolean;
      /** The caller aborted before calling: the lane answers with the reason and admits nothing. */
      preAborted: boolean;
      /** The task throws synchronously the moment it starts. */
      throwsAtStart: boolean;
    }
  | { kind: 'abortWaiting'; pick: number }
  | { kind: 'abortRunning'; pick: number }
  | { kind: 'complete'; pick: number }
  | { kind: 'fail'; pick: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'whenIdle' }
  | { kind: 'close' }
  | { kind: 'stopNow' };

/** True about once in `oneIn` draws; shrinks towards false. */
const rarely = (oneIn: number) => fc.nat({ max: oneIn - 1 }).map((n) => n === oneIn - 1);

const shapeArb: fc.Arbitrary<LaneShape> = fc.integer({ min: 0, max: 5 }).chain((queueCapacity) =>
  fc.record({
    concurrency: fc.integer({ min: 1, max: 4 }),
    queueCapacity: fc.constant(queueCapacity),
    maxQueuedPerTenant: fc.integer({ min: 1, max: Math.max(1, queueCapacity) }),
    queueTtlMs: fc.integer({ min: 1, max: MAX_TTL_MS }),
  }),
);

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 60,
    arbitrary: fc.record({
      kind: fc.constant('submit' as const),
      tenant: fc.constantFrom(...TENANTS),
      // Mostly the default class, so the fair queue inside one class is exercised as much as the classes.
      priority: fc.constantFrom<PriorityClass>('standard', 'standard', 'critical', 'sheddable'),
      queueTtlMs: fc.option(fc.integer({ min: 1, max: MAX_TTL_MS }), { nil: undefined }),
      abortable: fc.boolean(),
      preAborted: rarely(20),
      throwsAtStart: rarely(8),
    }),
  },
  { weight: 12, arbitrary: fc.record({ kind: fc.constant('abortWaiting' as const), pick: fc.nat() }) },
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('abortRunning' as const), pick: fc.nat() }) },
  { weight: 16, arbitrary: fc.record({ kind: fc.constant('complete' as const), pick: fc.nat() }) },
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('fail' as const), pick: fc.nat() }) },
  { weight: 12, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 300 }) }) },
  { weight: 4, arbitrary: fc.constant({ kind: 'whenIdle' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'close' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'stopNow' as const }) },
);

/** Stands for "a ResilienceError of kind queue_expired" in an expected outcome. */
const QUEUE_EXPIRED = Symbol('queue_expired');
/** Stands for "a ResilienceError of kind queue_full" (a waiting call displaced by a higher class). */
const DISPLACED = Symbol('displaced');

type Outcome = { state: 'pending' } | { state: 'fulfilled'; value: unknown } | { state: 'rejected'; reason: unknown };

interface Call {
  readonly id: number;
  readonly tenant: string;
  readonly rank: PriorityRank;
  readonly queueTtlMs: number;
  readonly abort: LazyAbortController | undefined;
  readonly abortReason: Error;
  readonly throwsAtStart: boolean;
  readonly gate: Deferred<string>;
  readonly value: string;
  readonly failure: Error;
  /** Counted by the lane as accepted (a pre-aborted call gets a promise but is not). */
  accepted: boolean;
  /** Where the model says the call is: waiting in the queue, holding a slot, or neither. */
  phase: 'waiting' | 'running' | 'done';
  enqueuedAt: number;
  /** How many times the model says the task has been invoked. */
  expectedStarts: number;
  /** How many times the lane invoked the task. */
  starts: number;
  /** Its deferred has been settled by hand, or it threw at start. */
  taskSettled: boolean;
  /** How the call left the queue without running, if it did. */
  leftWaiting: 'aborted' | 'expired' | 'stopped' | 'displaced' | undefined;
  /** The caller aborted while the task ran. */
  callerAbortedRunning: boolean;
  /** stopNow found the task running. */
  stoppedByLane: boolean;
  expected: Outcome;
  observed: Outcome;
  settlements: number;
}

/** A plain-array reference of the fair queue: FIFO per tenant, round-robin, newcomers before the cursor. */
class ModelFairQueue {
  private readonly byTenant = new Map<string, Call[]>();
  private ring: string[] = [];
  private cursor: string | undefined;
  size = 0;

  sizeOf(tenant: string): number {
    return this.byTenant.get(tenant)?.length ?? 0;
  }

  push(call: Call): void {
    let fifo = this.byTenant.get(call.tenant);
    if (!fifo) {
      fifo = [];
      this.byTenant.set(call.tenant, fifo);
      if (this.cursor === undefined) {
        this.ring = [call.tenant];
        this.cursor = call.tenant;
      } else {
        this.ring.splice(this.ring.indexOf(this.cursor), 0, call.tenant);
      }
    }
    fifo.push(call);
    this.size++;
  }

  remove(call: Call): void {
    const fifo = this.byTenant.get(call.tenant);
    const index = fifo?.indexOf(call) ?? -1;
    if (!fifo || index === -1) return;
    fifo.splice(index, 1);
    this.size--;
    if (fifo.length > 0) return;
    this.byTenant.delete(call.tenant);
    const at = this.ring.indexOf(call.tenant);
    this.ring.splice(at, 1);
    if (this.cursor === call.tenant) this.cursor = this.ring.length > 0 ? this.ring[at % this.ring.length] : undefined;
  }

  shift(): Call | undefined {
    const tenant = this.cursor;
    if (tenant === undefined) return undefined;
    const call = this.byTenant.get(tenant)![0];
    this.remove(call);
    if (this.byTenant.has(tenant)) this.cursor = this.ring[(this.ring.indexOf(tenant) + 1) % this.ring.length];
    return call;
  }
}

/** A reference of the lane's classed queue: a fair queue per class, the highest class served first. */
class ModelClassedQueue {
  private readonly classes = [new ModelFairQueue(), new ModelFairQueue(), new ModelFairQueue()];
  /** Each class's waiting calls in arrival order: the newest is displaced first. */
  private readonly arrivals: Call[][] = [[], [], []];

  get size(): number {
    return this.classes.reduce((sum, queue) => sum + queue.size, 0);
  }

  sizeOf(tenant: string): number {
    return this.classes.reduce((sum, queue) => sum + queue.sizeOf(tenant), 0);
  }

  sizeOfClass(rank: PriorityRank): number {
    return this.classes[rank].size;
  }

  push(call: Call): void {
    this.classes[call.rank].push(call);
    this.arrivals[call.rank].push(call);
  }

  remove(call: Call): void {
    this.classes[call.rank].remove(call);
    const arrivals = this.arrivals[call.rank];
    const at = arrivals.indexOf(call);
    if (at !== -1) arrivals.splice(at, 1);
  }

  shift(): Call | undefined {
    for (const queue of this.classes) {
      const call = queue.shift();
      if (!call) continue;
      this.remove(call);
      return call;
    }
    return undefined;
  }

  newestBelow(rank: PriorityRank): Call | undefined {
    for (let lower = 2; lower > rank; lower--) {
      const arrivals = this.arrivals[lower];
      if (arrivals.length > 0) return arrivals[arrivals.length - 1];
    }
    return undefined;
  }
}

class PropertyViolation extends Error {}

/** One interleaving: the real lane, and a model of what it must do, compared after every step. */
class Interleaving {
  readonly clock = new FakeClock();
  readonly lane: Lane;
  readonly calls: Call[] = [];
  private readonly waiting = new ModelClassedQueue();
  private readonly stopReason = new ResilienceError('stopped', 'the lane stopped');
  private active = 0;
  private peakActive = 0;
  private closed = false;
  private stopped = false;
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
  /** cancelledRunning for a call the caller aborted and stopNow then ended may go either way. */
  private cancelledRunningAtMost = 0;
  /** Tasks that threw at start; the lane hears of it one microtask later. */
  private readonly threw: Call[] = [];
  private readonly idleWaiters: Array<{ due: boolean; resolved: boolean }> = [];
  private where = 'setup';

  constructor(readonly shape: LaneShape) {
    this.lane = new Lane({ name: 'property', clock: this.clock, ...shape });
  }

  async step(step: Step, index: number): Promise<void> {
    this.where = `step ${index} (${step.kind})`;
    switch (step.kind) {
      case 'submit':
        this.submit(step);
        break;
      case 'abortWaiting':
        this.abortWaiting(step.pick);
        break;
      case 'abortRunning':
        this.abortRunning(step.pick);
        break;
      case 'complete':
      case 'fail':
        this.settleTask(step.pick, step.kind);
        break;
      case 'advance':
        this.advance(step.ms);
        break;
      case 'whenIdle': {
        const waiter = { due: this.isIdle(), resolved: false };
        this.idleWaiters.push(waiter);
        void this.lane.whenIdle().then(() => (waiter.resolved = true));
        break;
      }
      case 'close':
        this.lane.close();
        this.closed = true;
        break;
      case 'stopNow':
        this.stopNow();
        break;
    }
    this.flushThrown();
    await settle();
    this.checkInvariants();
  }

  /** Settles every task still running, lets every TTL pass, and checks that every call was answered once. */
  async finish(): Promise<void> {
    this.where = 'final drain';
    for (;;) {
      const running = this.calls.find((call) => call.phase === 'running' && !call.taskSettled);
      if (!running) break;
      this.settleCall(running, 'complete');
      this.flushThrown();
      await settle();
      this.checkInvariants();
    }
    this.advance(MAX_TTL_MS + 1);
    await settle();
    await settle();
    this.checkInvariants();

    let idle = false;
    void this.lane.whenIdle().then(() => (idle = true));
    await settle();
    const snapshot = this.lane.snapshot();
    check(
      snapshot.active === 0 && snapshot.waiting === 0,
      () => `lane not idle at the end: ${JSON.stringify(snapshot)}`,
    );
    check(idle, () => 'whenIdle() does not resolve on an idle lane');
    check(this.clock.pendingTimers === 0, () => `${this.clock.pendingTimers} timers left behind`);
    for (const call of this.calls) {
      check(call.settlements === 1, () => `call ${call.id} settled ${call.settlements} times`);
    }
    for (const waiter of this.idleWaiters) check(waiter.resolved, () => 'a whenIdle() promise never resolved');
  }

  private submit(step: Extract<Step, { kind: 'submit' }>): void {
    const { concurrency, queueCapacity, maxQueuedPerTenant } = this.shape;
    const id = this.calls.length;
    const abortReason = new Error(`caller ${id} left`);
    const abort = step.abortable || step.preAborted ? new LazyAbortController() : undefined;
    if (step.preAborted) abort!.abort(abortReason);
    const call: Call = {
      id,
      tenant: step.tenant,
      rank: rankOf(step.priority),
      queueTtlMs: step.queueTtlMs ?? this.shape.queueTtlMs,
      abort,
      abortReason,
      throwsAtStart: step.throwsAtStart,
      gate: deferred<string>(),
      value: `value ${id}`,
      failure: new Error(`task ${id} failed`),
      accepted: false,
      phase: 'done',
      enqueuedAt: 0,
      expectedStarts: 0,
      starts: 0,
      taskSettled: false,
      leftWaiting: undefined,
      callerAbortedRunning: false,
      stoppedByLane: false,
      expected: { state: 'pending' },
      observed: { state: 'pending' },
      settlements: 0,
    };
    const task = (): Promise<string> => {
      call.starts++;
      if (call.throwsAtStart) throw call.failure;
      return call.gate.promise;
    };

    const before = this.lane.snapshot();
    const timersBefore = this.clock.pendingTimers;
    const tenantWaiting = this.waiting.sizeOf(step.tenant);
    const result = this.lane.run(task, {
      tenant: step.tenant,
      abort,
      queueTtlMs: step.queueTtlMs,
      priority: step.priority,
    });

    // A full queue takes a call only in the place of the newest waiting call of a lower class.
    const full = this.waiting.size >= queueCapacity;
    const displaced = full ? this.waiting.newestBelow(call.rank) : undefined;
    let expected: LaneRejection | 'refused_aborted' | 'started' | 'queued';
    if (this.closed) expected = 'stopped';
    else if (step.preAborted) expected = 'refused_aborted';
    else if (this.active < concurrency) expected = 'started';
    else if (full && !displaced) expected = 'queue_full';
    else if (tenantWaiting - (displaced?.tenant === step.tenant ? 1 : 0) >= maxQueuedPerTenant) {
      expected = 'tenant_queue_full';
    } else expected = 'queued';

    if (typeof result === 'string') {
      check(result === expected, () => `admission answered '${result}', expected '${expected}'`);
      // A refusal is only ever the truth, judged by the lane's own state at that moment.
      if (result === 'stopped') check(this.closed && this.lane.isClosed, () => "'stopped' from a lane never closed");
      if (result === 'queue_full') {
        check(
          before.active === concurrency && before.waiting === queueCapacity,
          () => `'queue_full' with ${JSON.stringify(before)}`,
        );
      }
      if (result === 'tenant_queue_full') {
        check(
          before.active === concurrency && tenantWaiting >= maxQueuedPerTenant,
          () => `'tenant_queue_full' with ${JSON.stringify(before)} and ${tenantWaiting} of the tenant waiting`,
        );
      }
      check(call.starts === 0, () => 'a refused call ran its task');
      check(this.clock.pendingTimers === timersBefore, () => 'a refusal set a timer');
      if (result === 'stopped') this.counts.stopped++;
      else if (result === 'queue_full') this.counts.queueFull++;
      else this.counts.tenantQueueFull++;
      return;
    }

    this.calls.push(call);
    void result.then(
      (value) => this.observe(call, { state: 'fulfilled', value }),
      (reason: unknown) => this.observe(call, { state: 'rejected', reason }),
    );
    const actual = step.preAborted ? 'refused_aborted' : call.starts === 1 ? 'started' : 'queued';
    check(!this.closed, () => 'a closed lane admitted a call');
    check(actual === expected, () => `admission ${actual}, expected ${expected} (lane was ${JSON.stringify(before)})`);
    if (expected === 'refused_aborted') {
      const after = this.lane.snapshot();
      check(call.starts === 0, () => 'the task of a call aborted before admission ran');
      check(
        after.active === before.active && after.waiting === before.waiting && this.clock.pendingTimers === timersBefore,
        () => `a call aborted before admission took a place: ${JSON.stringify(after)}`,
      );
      call.expected = { state: 'rejected', reason: abortReason };
      return;
    }
    call.accepted = true;
    this.counts.accepted++;
    if (expected === 'started') {
      check(before.active < concurrency, () => `started a call with ${JSON.stringify(before)}`);
      this.start(call);
    } else {
      check(
        before.active === concurrency && (before.waiting < queueCapacity || displaced !== undefined),
        () => `queued a call with ${JSON.stringify(before)} and ${tenantWaiting} of the tenant waiting`,
      );
      if (displaced) {
        check(displaced.rank > call.rank, () => `call ${call.id} displaced call ${displaced.id} of no lower class`);
        this.waiting.remove(displaced);
        displaced.phase = 'done';
        displaced.leftWaiting = 'displaced';
        this.counts.displaced++;
        this.answer(displaced, { state: 'rejected', reason: DISPLACED });
      }
      call.phase = 'waiting';
      call.enqueuedAt = this.clock.now();
      this.waiting.push(call);
    }
  }

  private abortWaiting(pick: number): void {
    const candidates = this.calls.filter((call) => call.phase === 'waiting' && call.abort);
    if (candidates.length === 0) return;
    const call = candidates[pick % candidates.length];
    const waitingBefore = this.lane.snapshot().waiting;
    call.abort!.abort(call.abortReason);
    // Removed at once, not at the next dequeue: the queue slot is free now (and the lane's
    // timer too, if nothing else waits: the invariants check that after every step).
    check(
      this.lane.snapshot().waiting === waitingBefore - 1,
      () => 'an aborted waiting call still holds its queue slot',
    );
    this.waiting.remove(call);
    call.phase = 'done';
    call.leftWaiting = 'aborted';
    this.counts.cancelledQueued++;
    this.answer(call, { state: 'rejected', reason: call.abortReason });
  }

  private abortRunning(pick: number): void {
    const candidates = this.calls.filter((call) => call.phase === 'running' && call.abort && !call.abort.aborted);
    if (candidates.length === 0) return;
    const call = candidates[pick % candidates.length];
    const before = this.lane.snapshot();
    call.abort!.abort(call.abortReason);
    call.callerAbortedRunning = true;
    const after = this.lane.snapshot();
    check(
      after.active === before.active && after.waiting === before.waiting,
      () => 'a caller abort freed a running slot',
    );
  }

  private settleTask(pick: number, how: 'complete' | 'fail'): void {
    const candidates = this.calls.filter((call) => call.phase === 'running' && !call.taskSettled);
    if (candidates.length === 0) return;
    this.settleCall(candidates[pick % candidates.length], how);
  }

  private settleCall(call: Call, how: 'complete' | 'fail'): void {
    call.taskSettled = true;
    if (how === 'complete') {
      call.gate.resolve(call.value);
      this.finishTask(call, { state: 'fulfilled', value: call.value });
    } else {
      call.gate.reject(call.failure);
      this.finishTask(call, { state: 'rejected', reason: call.failure });
    }
  }

  private advance(ms: number): void {
    this.clock.advance(ms);
    const now = this.clock.now();
    for (const call of this.calls) {
      if (call.phase !== 'waiting' || call.enqueuedAt + call.queueTtlMs > now) continue;
      this.waiting.remove(call);
      call.phase = 'done';
      call.leftWaiting = 'expired';
      this.counts.expired++;
      this.answer(call, { state: 'rejected', reason: QUEUE_EXPIRED });
    }
  }

  private stopNow(): void {
    this.lane.stopNow(this.stopReason);
    this.closed = true;
    this.stopped = true;
    for (let call = this.waiting.shift(); call; call = this.waiting.shift()) {
      call.phase = 'done';
      call.leftWaiting = 'stopped';
      this.answer(call, { state: 'rejected', reason: this.stopReason });
    }
    for (const call of this.calls) {
      if (call.phase !== 'running') continue;
      call.stoppedByLane = true;
      this.answer(call, { state: 'rejected', reason: this.stopReason });
      check(call.abort === undefined || call.abort.aborted, () => `stopNow did not abort running call ${call.id}`);
    }
    check(this.clock.pendingTimers === 0, () => 'stopNow left TTL timers behind');
  }

  private start(call: Call): void {
    call.phase = 'running';
    call.expectedStarts++;
    this.active++;
    this.peakActive = Math.max(this.peakActive, this.active);
    if (call.throwsAtStart) {
      call.taskSettled = true;
      this.threw.push(call);
    }
  }

  /** The lane hears of a task that threw at start one microtask later, in start order. */
  private flushThrown(): void {
    for (let call = this.threw.shift(); call; call = this.threw.shift()) {
      this.finishTask(call, { state: 'rejected', reason: call.failure });
    }
  }

  private finishTask(call: Call, outcome: Outcome): void {
    call.phase = 'done';
    this.active--;
    if (call.callerAbortedRunning) {
      this.cancelledRunningAtMost++;
      if (!call.stoppedByLane) this.counts.cancelledRunning++;
    }
    this.answer(call, outcome);
    while (this.active < this.shape.concurrency) {
      const next = this.waiting.shift();
      if (!next) break;
      this.start(next);
    }
  }

  /** The caller hears the first answer; later ones change nothing. */
  private answer(call: Call, outcome: Outcome): void {
    if (call.expected.state === 'pending') call.expected = outcome;
  }

  private observe(call: Call, outcome: Outcome): void {
    call.settlements++;
    call.observed = outcome;
  }

  private isIdle(): boolean {
    return this.active === 0 && this.waiting.size === 0;
  }

  private checkInvariants(): void {
    const { concurrency, queueCapacity } = this.shape;
    const snapshot = this.lane.snapshot();
    const { active, waiting, peakActive } = snapshot;
    const state = () => JSON.stringify(snapshot);

    check(active >= 0 && active <= concurrency, () => `active out of bounds: ${state()}`);
    check(waiting >= 0 && waiting <= queueCapacity, () => `waiting out of bounds: ${state()}`);
    check(waiting === 0 || active === concurrency || this.stopped, () => `calls wait beside a free slot: ${state()}`);
    check(peakActive >= active && peakActive <= concurrency, () => `peakActive out of bounds: ${state()}`);
    check(peakActive === this.peakActive, () => `peakActive ${peakActive}, expected ${this.peakActive}`);
    check(
      active === this.active && waiting === this.waiting.size,
      () => `${state()}, model ${this.active}/${this.waiting.size}`,
    );
    const { critical, standard, sheddable } = snapshot.waitingByClass;
    check(
      critical === this.waiting.sizeOfClass(0) &&
        standard === this.waiting.sizeOfClass(1) &&
        sheddable === this.waiting.sizeOfClass(2),
      () => `waiting by class ${JSON.stringify(snapshot.waitingByClass)} against the model's`,
    );
    // One queue-TTL timer for the whole lane while anything waits, none otherwise.
    check(
      this.clock.pendingTimers === (waiting > 0 ? 1 : 0),
      () => `${this.clock.pendingTimers} timers with ${waiting} calls waiting`,
    );

    let holding = 0;
    let unanswered = 0;
    let runningTasks = 0;
    for (const call of this.calls) {
      if (call.phase !== 'done') holding++;
      if (call.accepted && call.observed.state === 'pending') unanswered++;
      if (call.starts > 0 && !call.taskSettled) runningTasks++;
      check(call.starts <= 1, () => `task ${call.id} started ${call.starts} times`);
      check(
        call.leftWaiting === undefined || call.starts === 0,
        () => `task ${call.id} ran after it was ${call.leftWaiting} while waiting`,
      );
      check(
        call.starts === call.expectedStarts,
        () => `task ${call.id} started ${call.starts} times, expected ${call.expectedStarts}`,
      );
      check(call.settlements <= 1, () => `call ${call.id} settled ${call.settlements} times`);
      check(
        sameOutcome(call.observed, call.expected),
        () => `call ${call.id} is ${show(call.observed)}, expected ${show(call.expected)}`,
      );
    }
    check(holding === active + waiting, () => `${holding} calls hold a slot or a queue place, lane says ${state()}`);
    check(holding <= concurrency + queueCapacity, () => `${holding} accepted calls unfinished`);
    check(unanswered <= concurrency + queueCapacity, () => `${unanswered} accepted calls unanswered`);
    check(active === runningTasks, () => `active ${active}, but ${runningTasks} started tasks are unsettled`);

    const stats = this.lane.stats();
    for (const key of Object.keys(this.counts) as Array<keyof LaneStats>) {
      if (key === 'cancelledRunning') continue;
      check(stats[key] === this.counts[key], () => `stats.${key} is ${stats[key]}, expected ${this.counts[key]}`);
    }
    check(
      stats.cancelledRunning >= this.counts.cancelledRunning && stats.cancelledRunning <= this.cancelledRunningAtMost,
      () =>
        `stats.cancelledRunning is ${stats.cancelledRunning}, expected ${this.counts.cancelledRunning}..${this.cancelledRunningAtMost}`,
    );
    check(this.lane.isClosed === this.closed, () => `isClosed is ${this.lane.isClosed}`);

    if (this.isIdle()) for (const waiter of this.idleWaiters) waiter.due = true;
    for (const waiter of this.idleWaiters) {
      check(waiter.resolved === waiter.due, () => `a whenIdle() promise is ${waiter.resolved ? '' : 'not '}resolved`);
    }
  }

  /** Prefixes a violation with the step it happened at. */
  fail(error: unknown): never {
    if (error instanceof PropertyViolation) {
      throw new PropertyViolation(`${this.where}, lane ${JSON.stringify(this.shape)}: ${error.message}`);
    }
    throw error;
  }
}

function check(condition: boolean, message: () => string): asserts condition {
  if (!condition) throw new PropertyViolation(message());
}

function sameOutcome(observed: Outcome, expected: Outcome): boolean {
  if (observed.state !== expected.state) return false;
  if (observed.state === 'fulfilled') {
    return expected.state === 'fulfilled' && Object.is(observed.value, expected.value);
  }
  if (observed.state === 'pending' || expected.state !== 'rejected') return true;
  if (expected.reason === QUEUE_EXPIRED) {
    return observed.reason instanceof ResilienceError && observed.reason.kind === 'queue_expired';
  }
  if (expected.reason === DISPLACED) {
    return observed.reason instanceof ResilienceError && observed.reason.kind === 'queue_full';
  }
  return Object.is(observed.reason, expected.reason);
}

function show(outcome: Outcome): string {
  if (outcome.state === 'pending') return 'pending';
  const detail = outcome.state === 'fulfilled' ? outcome.value : outcome.reason;
  const text =
    detail === QUEUE_EXPIRED
      ? 'queue_expired'
      : detail === DISPLACED
        ? 'displaced'
        : detail instanceof Error
          ? detail.message
          : String(detail);
  return `${outcome.state} (${text})`;
}

describe('Lane under random interleavings', () => {
  it('keeps its bounds, starts each task at most once, a higher class first, and answers every call exactly once', async () => {
    let interleavings = 0;
    let steps = 0;
    await fc.assert(
      fc.asyncProperty(
        shapeArb,
        fc.array(stepArb, { minLength: 1, maxLength: MAX_STEPS, size: 'max' }),
        async (shape, commands) => {
          const run = new Interleaving(shape);
          try {
            for (const [index, command] of commands.entries()) await run.step(command, index);
            await run.finish();
          } catch (error) {
            run.fail(error);
          }
          interleavings++;
          steps += commands.length;
        },
      ),
      { numRuns: NUM_RUNS },
    );
    console.log(`lane property: ${interleavings} interleavings, ${steps} steps (numRuns ${NUM_RUNS})`);
    expect(interleavings).toBe(NUM_RUNS);
  });
});
