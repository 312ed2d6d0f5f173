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

  it('numbers the work’s own progress after the wait’s, so what the client sees only rises', () => {
    progress.start(wait());
    clock.advance(2_000);
    started = true;
    clock.advance(1_000);

    progress.relay({ progress: 0, total: 10 });
    progress.relay({ progress: 4, total: 10, message: 'x'.repeat(600) });
    progress.relay({ progress: 3 });
    progress.relay({ progress: Number.NaN });
    progress.relay({ progress: 10, total: 10, message: 'done' });

    expect(updates.slice(3)).toEqual([
      { progress: 2_004, total: 2_010, message: 'x'.repeat(500) },
      { progress: 2_010, total: 2_010, message: 'done' },
    ]);
  });

  it('hands nothing on once the call ended', () => {
    progress.stop();

    progress.relay({ progress: 1 });

    expect(updates).toEqual([]);
  });
});
