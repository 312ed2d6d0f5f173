import { Lane, type LaneWork, type PriorityClass } from '../bulkhead';
import { Breaker } from '../circuit-breaker';
import { seededRandom } from '../common';
import { FakeClock } from '../common/fake-clock';
import { OverloadGuard, overloadSchema } from '../overload';
import { admitCall } from './admit-call';

/** A lane's work that notes what the lane did with it. */
class NotedWork implements LaneWork {
  started = 0;
  refused: unknown;
  readonly tenant = 'acme';

  constructor(readonly priority?: PriorityClass) {}

  start(): Promise<void> {
    this.started++;
    return new Promise(() => {});
  }

  refuse(reason: unknown): void {
    this.refused = reason;
  }
}

describe('admitCall: the overload guard, the breaker, then the lane', () => {
  const clock = new FakeClock();
  const breakers: Breaker[] = [];
  afterEach(() => breakers.splice(0).forEach((breaker) => breaker.shutdown()));

  function breaker(): Breaker {
    const made = new Breaker(
      'test',
      { errorThresholdPercentage: 50, volumeThreshold: 1, resetTimeoutMs: 30_000, rollingCountTimeoutMs: 10_000 },
      clock,
    );
    breakers.push(made);
    return made;
  }

  it('starts the work in a free slot', () => {
    const work = new NotedWork();
    expect(
      admitCall(
        undefined,
        new Lane({ name: 'l', concurrency: 1, queueCapacity: 0, clock }),
        breaker(),
        'acme',
        work,
        work,
      ),
    ).toBeUndefined();
    expect(work.started).toBe(1);
  });

  it('refuses circuit_open before the lane: the queue keeps its places', () => {
    const lane = new Lane({ name: 'l', concurrency: 1, queueCapacity: 1, clock });
    const open = breaker();
    open.forceOpen();
    const work = new NotedWork();
    expect(admitCall(undefined, lane, open, 'acme', work, work)?.kind).toBe('circuit_open');
    expect(work.started).toBe(0);
    expect(lane.snapshot()).toMatchObject({ active: 0, waiting: 0 });
  });

  /** A guard whose loop has run ten times its threshold late for a while: it sheds every sheddable call. */
  function overloadedGuard(): OverloadGuard {
    const settings = overloadSchema.parse({ eventLoopDelayMs: 100, sampleIntervalMs: 500 });
    const source = { read: () => ({ eventLoopDelayMs: 1000, heapUsedRatio: 0.1 }), close: () => {} };
    const guard = new OverloadGuard(settings, source, clock, seededRandom(1));
    guard.start();
    clock.advance(5000);
    return guard;
  }

  it("sheds an overloaded process's sheddable call first: before an open breaker and the queue, which keeps its places", () => {
    const guard = overloadedGuard();
    const lane = new Lane({ name: 'l', concurrency: 1, queueCapacity: 1, clock });
    const open = breaker();
    open.forceOpen();
    const work = new NotedWork('sheddable');
    expect(admitCall(guard, lane, open, 'acme', work, work)?.kind).toBe('overloaded');
    expect(admitCall(guard, lane, undefined, undefined, work, work)?.kind).toBe('overloaded');
    expect(lane.snapshot()).toMatchObject({ active: 0, waiting: 0 });
    expect(work.started).toBe(0);
    // A critical call passes the guard and is admitted as ever.
    const critical = new NotedWork('critical');
    expect(admitCall(guard, lane, undefined, undefined, critical, critical)).toBeUndefined();
    expect(critical.started).toBe(1);
    guard.stop();
  });

  it("answers a full lane's refusal as its error", () => {
    const lane = new Lane({ name: 'l', concurrency: 1, queueCapacity: 0, clock });
    const first = new NotedWork();
    admitCall(undefined, lane, undefined, undefined, first, first);
    const second = new NotedWork();
    expect(admitCall(undefined, lane, undefined, undefined, second, second)?.kind).toBe('queue_full');
    expect(second.started).toBe(0);
  });

  it('admits nothing without a lane: the caller runs its work itself', () => {
    const work = new NotedWork();
    expect(admitCall(undefined, undefined, breaker(), 'acme', work, work)).toBeUndefined();
    expect(work.started).toBe(0);
  });
});
