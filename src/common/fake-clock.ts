import type { Clock, TimerHandle } from './clock';

interface FakeTimer {
  readonly at: number;
  readonly order: number;
  readonly callback: () => void;
}

/**
 * A {@link Clock} that only moves when told to, for tests in virtual time.
 * Timers fire in deadline order (ties in the order they were set), each with `now()` set
 * to its own deadline, so a timer set by another timer's callback is placed correctly.
 */
export class FakeClock implements Clock {
  private current = 0;
  private order = 0;
  private timers: FakeTimer[] = [];

  /** @param wallStartMs epoch milliseconds that `wallNow()` reports at virtual time 0. */
  constructor(private readonly wallStartMs = Date.UTC(2026, 0, 1)) {}

  now(): number {
    return this.current;
  }

  wallNow(): number {
    return this.wallStartMs + this.current;
  }

  setTimer(callback: () => void, delayMs: number): TimerHandle {
    const timer: FakeTimer = { at: this.current + Math.max(0, delayMs), order: this.order++, callback };
    this.timers.push(timer);
    return timer;
  }

  clearTimer(handle: TimerHandle): void {
    const index = this.timers.indexOf(handle as FakeTimer);
    if (index !== -1) this.timers.splice(index, 1);
  }

  /** Timers set and not yet fired or cleared. */
  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way, synchronously. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (let timer = this.nextDue(target); timer; timer = this.nextDue(target)) {
      this.current = timer.at;
      timer.callback();
    }
    this.current = target;
  }

  /**
   * Like {@link advance}, but lets promise callbacks and I/O callbacks run after each timer,
   * so work that a timer resumes can set its next timer before time moves on.
   */
  async advanceAsync(ms: number): Promise<void> {
    const target = this.current + ms;
    await settle();
    for (let timer = this.nextDue(target); timer; timer = this.nextDue(target)) {
      this.current = timer.at;
      timer.callback();
      await settle();
    }
    this.current = target;
  }

  private nextDue(target: number): FakeTimer | undefined {
    let next: FakeTimer | undefined;
    for (const timer of this.timers) {
      if (timer.at > target) continue;
      if (!next || timer.at < next.at || (timer.at === next.at && timer.order < next.order)) next = timer;
    }
    if (next) this.timers.splice(this.timers.indexOf(next), 1);
    return next;
  }
}

/** Lets pending promise callbacks and I/O callbacks run (one macrotask turn). */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
