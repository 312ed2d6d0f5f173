import type { PriorityClass } from '../bulkhead';
import { type Clock, seededRandom, type TimerHandle } from '../common';
import { FakeClock } from '../common/fake-clock';
import { OverloadGuard } from './overload-guard';
import { type OverloadSettings, overloadSchema } from './overload.options';
import type { PressureReading, PressureSource } from './pressure-source';

/** A source whose next readings the test sets: the loop's delay in ms, the heap at 10 %. */
class ScriptedSource implements PressureSource {
  delayMs = 0;
  heapUsedRatio = 0.1;
  closed = false;

  read(): PressureReading {
    return { eventLoopDelayMs: this.delayMs, heapUsedRatio: this.heapUsedRatio };
  }

  close(): void {
    this.closed = true;
  }
}

const SETTINGS: OverloadSettings = overloadSchema.parse({ eventLoopDelayMs: 100, sampleIntervalMs: 500 });

function guardOf(settings: OverloadSettings = SETTINGS) {
  const clock = new FakeClock();
  const source = new ScriptedSource();
  const guard = new OverloadGuard(settings, source, clock, seededRandom(44));
  guard.start();
  /** One window at `delayMs` of loop delay. */
  const window = (delayMs: number) => {
    source.delayMs = delayMs;
    clock.advance(settings.sampleIntervalMs);
  };
  return { clock, source, guard, window };
}

/** The share of 2,000 new calls of `priority` the guard refuses now. */
function refusedShare(guard: OverloadGuard, priority: PriorityClass): number {
  let refused = 0;
  for (let i = 0; i < 2000; i++) if (guard.refusal(priority)) refused++;
  return refused / 2000;
}

describe('OverloadGuard', () => {
  it('admits every class while the loop is on time', () => {
    const { guard, window } = guardOf();
    for (let i = 0; i < 10; i++) window(60);
    expect(guard.snapshot().overloaded).toBe(false);
    expect(refusedShare(guard, 'sheddable')).toBe(0);
  });

  it('does not start shedding for one slow window (a GC pause), and does for two', () => {
    const { guard, window } = guardOf();
    window(10);
    window(190);
    expect(guard.snapshot().overloaded).toBe(false);
    window(190);
    expect(guard.snapshot().overloaded).toBe(true);
  });

  it('sheds sheddable calls first and gradually, standard ones only further past the threshold, critical ones never', () => {
    const { guard, window } = guardOf();
    // Held at 1.2x the threshold: the smoothed pressure settles there.
    for (let i = 0; i < 12; i++) window(120);
    const mild = { sheddable: refusedShare(guard, 'sheddable'), standard: refusedShare(guard, 'standard') };
    expect(mild.sheddable).toBeGreaterThan(0.5);
    expect(mild.sheddable).toBeLessThan(0.8);
    expect(mild.standard).toBe(0);
    // Held at 1.7x: every sheddable call, about half the standard ones.
    for (let i = 0; i < 12; i++) window(170);
    expect(refusedShare(guard, 'sheddable')).toBe(1);
    const standard = refusedShare(guard, 'standard');
    expect(standard).toBeGreaterThan(0.3);
    expect(standard).toBeLessThan(0.7);
    // Far past it: every standard call, still no critical one.
    for (let i = 0; i < 12; i++) window(1000);
    expect(refusedShare(guard, 'standard')).toBe(1);
    expect(refusedShare(guard, 'critical')).toBe(0);
  });

  it('sees a loop blocked throughout a window, which the delay monitor saw nothing of, by its own late timer', () => {
    const fake = new FakeClock();
    let lateByMs = 0;
    // The guard's timers fire `lateByMs` after they are due, as on a loop that was busy then.
    const lateClock: Clock = {
      now: () => fake.now(),
      wallNow: () => fake.wallNow(),
      setTimer: (callback: () => void, delayMs: number): TimerHandle => fake.setTimer(callback, delayMs + lateByMs),
      clearTimer: (handle: TimerHandle) => fake.clearTimer(handle),
    };
    const source = new ScriptedSource();
    const guard = new OverloadGuard(SETTINGS, source, lateClock, seededRandom(44));
    guard.start();
    lateByMs = 300;
    fake.advance(10 * (SETTINGS.sampleIntervalMs + lateByMs));
    expect(guard.snapshot()).toMatchObject({ overloaded: true, reading: { eventLoopDelayMs: 300 } });
    expect(refusedShare(guard, 'sheddable')).toBe(1);
  });

  it('treats a call without a class as standard', () => {
    const { guard, window } = guardOf();
    for (let i = 0; i < 12; i++) window(1000);
    expect(guard.refusal(undefined)?.kind).toBe('overloaded');
  });

  it('sheds on a nearly full heap as on a late loop', () => {
    const { guard, source, window } = guardOf();
    source.heapUsedRatio = 0.97;
    for (let i = 0; i < 6; i++) window(10);
    expect(guard.snapshot().overloaded).toBe(true);
    expect(refusedShare(guard, 'sheddable')).toBeGreaterThan(0);
  });

  it('keeps shedding just under the threshold and recovers only below 80 % of it (no flapping)', () => {
    const { guard, window } = guardOf();
    for (let i = 0; i < 6; i++) window(150);
    expect(guard.snapshot().overloaded).toBe(true);
    const changes: boolean[] = [];
    guard.onStateChange((overloaded) => changes.push(overloaded));
    // Hovering around the threshold: it stays in, it does not go in and out.
    for (let i = 0; i < 10; i++) window(i % 2 === 0 ? 90 : 105);
    expect(changes).toEqual([]);
    expect(refusedShare(guard, 'sheddable')).toBeGreaterThan(0);
    for (let i = 0; i < 6; i++) window(20);
    expect(changes).toEqual([false]);
    expect(refusedShare(guard, 'sheddable')).toBe(0);
  });

  it('answers 503 overloaded with a Retry-After of the recovery it measured', () => {
    const { clock, guard, window } = guardOf();
    window(300);
    // Nothing measured yet: two windows.
    expect(guard.refusal('sheddable')).toMatchObject({ kind: 'overloaded', status: 503, retryAfterMs: 1000 });
    // An overload of 5.5 s from entering to recovering...
    const enteredAt = clock.now();
    for (let i = 0; i < 8; i++) window(300);
    while (guard.snapshot().overloaded) window(0);
    expect(clock.now() - enteredAt).toBe(5500);
    // ...makes the next one's Retry-After that long at first, shrinking as it goes on.
    window(300);
    expect(guard.refusal('sheddable')!.retryAfterMs).toBe(5500);
    for (let i = 0; i < 3; i++) window(300);
    expect(guard.refusal('sheddable')!.retryAfterMs).toBe(4000);
  });

  it('gives an overload that outlasts the past ones as long again, up to maxRetryAfterMs', () => {
    const { guard, window } = guardOf(overloadSchema.parse({ maxRetryAfterMs: 5000 }));
    // Entered at the first window; 3.5 s later it has outlasted the first guess (1 s).
    for (let i = 0; i < 8; i++) window(300);
    expect(guard.refusal('sheddable')!.retryAfterMs).toBe(3500);
    for (let i = 0; i < 20; i++) window(300);
    expect(guard.refusal('sheddable')!.retryAfterMs).toBe(5000);
  });

  it('tells each refusal with its class', () => {
    const { guard, window } = guardOf();
    const refused: PriorityClass[] = [];
    guard.onRefuse((priority) => refused.push(priority));
    for (let i = 0; i < 12; i++) window(1000);
    guard.refusal('sheddable');
    guard.refusal('critical');
    expect(refused).toEqual(['sheddable']);
  });

  it('stops reading and admits everything once stopped', () => {
    const { guard, source, window } = guardOf();
    for (let i = 0; i < 12; i++) window(1000);
    guard.stop();
    expect(source.closed).toBe(true);
    window(1000);
    expect(guard.refusal('sheddable')).toBeUndefined();
  });
});
