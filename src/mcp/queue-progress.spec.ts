import { Lane } from '../bulkhead';
import { FakeClock } from '../common/fake-clock';
import type { QueueWait } from '../dispatch';
import { QueueProgress, type QueueProgressUpdate } from './queue-progress';

describe('QueueProgress', () => {
  let clock: FakeClock;
  let lane: Lane;
  let updates: QueueProgressUpdate[];
  let progress: QueueProgress;
  let started: boolean;

  const wait = (): QueueWait => ({
    lane,
    queueTtlMs: 30_000,
    get started() {
      return started;
    },
  });

  beforeEach(() => {
    clock = new FakeClock();
    lane = new Lane({ name: 'render', concurrency: 1, queueCapacity: 2, clock });
    updates = [];
    started = false;
    progress = new QueueProgress(clock, 1_000, (update) => updates.push(update));
  });

  it('reports at once, then every interval, the time waited out of the queue TTL', () => {
    progress.start(wait());
    clock.advance(2_500);

    expect(updates).toEqual([
      { progress: 0, total: 30_000, message: "waiting for a slot in lane 'render': 0 running, 0 waiting" },
      { progress: 1_000, total: 30_000, message: "waiting for a slot in lane 'render': 0 running, 0 waiting" },
      { progress: 2_000, total: 30_000, message: "waiting for a slot in lane 'render': 0 running, 0 waiting" },
    ]);
    expect(clock.pendingTimers).toBe(1);
  });

  it('stops once the call took its slot, leaving no timer', () => {
    progress.start(wait());
    clock.advance(1_000);
    started = true;

    clock.advance(5_000);

    expect(updates.map((update) => update.progress)).toEqual([0, 1_000]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('stops when the call ends, and says nothing if it ended before it waited', () => {
    progress.start(wait());
    progress.stop();
    clock.advance(5_000);

    expect(updates).toHaveLength(1);
    expect(clock.pendingTimers).toBe(0);

    const late = new QueueProgress(clock, 1_000, (update) => updates.push(update));
    late.stop();
    late.start(wait());
    expect(updates).toHaveLength(1);
  });
});
