import { Lane, type LaneWork } from '../bulkhead';
import { Breaker } from '../circuit-breaker';
import { FakeClock } from '../common/fake-clock';
import { admitCall } from './admit-call';

/** A lane's work that notes what the lane did with it. */
class NotedWork implements LaneWork {
  started = 0;
  refused: unknown;
  readonly tenant = 'acme';

  start(): Promise<void> {
    this.started++;
    return new Promise(() => {});
  }

  refuse(reason: unknown): void {
    this.refused = reason;
  }
}

describe('admitCall: the breaker, then the lane', () => {
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
