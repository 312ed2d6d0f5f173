import { sleep } from './clock';
import { FakeClock, settle } from './fake-clock';

describe('FakeClock', () => {
  it('starts at 0 and reports wall time from its start', () => {
    const clock = new FakeClock(Date.UTC(2030, 5, 1));
    expect(clock.now()).toBe(0);
    expect(clock.wallNow()).toBe(Date.UTC(2030, 5, 1));
    clock.advance(2500);
    expect(clock.now()).toBe(2500);
    expect(clock.wallNow()).toBe(Date.UTC(2030, 5, 1) + 2500);
  });

  it('reports 2026-01-01 as its default wall start', () => {
    expect(new FakeClock().wallNow()).toBe(Date.UTC(2026, 0, 1));
  });

  it('moves only when told to', () => {
    const clock = new FakeClock();
    const fired = jest.fn();
    clock.setTimer(fired, 0);
    expect(fired).not.toHaveBeenCalled();
    expect(clock.now()).toBe(0);
    clock.advance(0);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it('fires a timer when time reaches its deadline, not before, and only once', () => {
    const clock = new FakeClock();
    const fired = jest.fn();
    clock.setTimer(fired, 100);
    clock.advance(99);
    expect(fired).not.toHaveBeenCalled();
    clock.advance(1);
    expect(fired).toHaveBeenCalledTimes(1);
    clock.advance(1000);
    expect(fired).toHaveBeenCalledTimes(1);
    expect(clock.pendingTimers).toBe(0);
  });

  it('fires timers in deadline order, ties in the order they were set, each at its own deadline', () => {
    const clock = new FakeClock();
    const fired: string[] = [];
    const at = (name: string) => () => fired.push(`${name}@${clock.now()}`);
    clock.setTimer(at('c'), 30);
    clock.setTimer(at('a1'), 10);
    clock.setTimer(at('b'), 20);
    clock.setTimer(at('a2'), 10);
    clock.setTimer(at('a3'), 10);
    clock.advance(50);
    expect(fired).toEqual(['a1@10', 'a2@10', 'a3@10', 'b@20', 'c@30']);
    expect(clock.now()).toBe(50);
  });

  it('fires a timer set by a timer within the same advance when it falls due, placed from its deadline', () => {
    const clock = new FakeClock();
    const fired: string[] = [];
    clock.setTimer(() => {
      fired.push(`first@${clock.now()}`);
      clock.setTimer(() => fired.push(`second@${clock.now()}`), 15);
    }, 10);
    clock.setTimer(() => fired.push(`other@${clock.now()}`), 20);
    clock.advance(30);
    expect(fired).toEqual(['first@10', 'other@20', 'second@25']);
  });

  it('leaves a timer set by a timer for later when it falls due after the target', () => {
    const clock = new FakeClock();
    const fired: number[] = [];
    clock.setTimer(() => clock.setTimer(() => fired.push(clock.now()), 50), 10);
    clock.advance(30);
    expect(fired).toEqual([]);
    expect(clock.pendingTimers).toBe(1);
    clock.advance(30);
    expect(fired).toEqual([60]);
  });

  it('orders a zero-delay timer set by a timer after timers already due at the same instant', () => {
    const clock = new FakeClock();
    const fired: string[] = [];
    clock.setTimer(() => {
      fired.push('a');
      clock.setTimer(() => fired.push('c'), 0);
    }, 10);
    clock.setTimer(() => fired.push('b'), 10);
    clock.advance(10);
    expect(fired).toEqual(['a', 'b', 'c']);
  });

  it('treats a negative delay as zero', () => {
    const clock = new FakeClock();
    clock.advance(100);
    const fired = jest.fn();
    clock.setTimer(() => fired(clock.now()), -50);
    clock.advance(0);
    expect(fired).toHaveBeenCalledWith(100);
  });

  it('does not fire a cleared timer and counts only pending ones', () => {
    const clock = new FakeClock();
    const kept = jest.fn();
    const cleared = jest.fn();
    clock.setTimer(kept, 10);
    const handle = clock.setTimer(cleared, 10);
    expect(clock.pendingTimers).toBe(2);
    clock.clearTimer(handle);
    expect(clock.pendingTimers).toBe(1);
    clock.advance(10);
    expect(cleared).not.toHaveBeenCalled();
    expect(kept).toHaveBeenCalledTimes(1);
  });

  it('ignores clearing a timer that already fired, was cleared, or was never set', () => {
    const clock = new FakeClock();
    const fired = clock.setTimer(() => undefined, 1);
    clock.advance(1);
    const other = jest.fn();
    clock.setTimer(other, 5);
    clock.clearTimer(fired);
    clock.clearTimer(fired);
    clock.clearTimer(undefined);
    clock.clearTimer({});
    expect(clock.pendingTimers).toBe(1);
    clock.advance(5);
    expect(other).toHaveBeenCalledTimes(1);
  });

  it('does not fire a timer cleared by an earlier timer due at the same instant', () => {
    const clock = new FakeClock();
    const second = jest.fn();
    const handles: unknown[] = [];
    clock.setTimer(() => clock.clearTimer(handles[0]), 10);
    handles.push(clock.setTimer(second, 10));
    clock.advance(10);
    expect(second).not.toHaveBeenCalled();
  });

  it('advance fires timers synchronously, before promise continuations run', async () => {
    const clock = new FakeClock();
    const steps: number[] = [];
    const loop = (async () => {
      for (let i = 0; i < 3; i++) {
        await sleep(clock, 100);
        steps.push(clock.now());
      }
    })();
    clock.advance(300);
    expect(steps).toEqual([]);
    await settle();
    // The first sleep ended at 300 (advance left the clock there), and the next one waits from 300.
    expect(steps).toEqual([300]);
    expect(clock.pendingTimers).toBe(1);
    await clock.advanceAsync(200);
    await loop;
    expect(steps).toEqual([300, 400, 500]);
  });

  it('advanceAsync lets promise continuations set the next timer before time moves on', async () => {
    const clock = new FakeClock();
    const steps: number[] = [];
    const loop = (async () => {
      for (let i = 0; i < 3; i++) {
        await sleep(clock, 100);
        steps.push(clock.now());
      }
    })();
    await clock.advanceAsync(300);
    expect(steps).toEqual([100, 200, 300]);
    expect(clock.now()).toBe(300);
    expect(clock.pendingTimers).toBe(0);
    await loop;
  });

  it('advanceAsync stops at its target and leaves later timers pending', async () => {
    const clock = new FakeClock();
    const steps: number[] = [];
    void (async () => {
      for (;;) {
        await sleep(clock, 100);
        steps.push(clock.now());
      }
    })();
    await clock.advanceAsync(250);
    expect(steps).toEqual([100, 200]);
    expect(clock.now()).toBe(250);
    expect(clock.pendingTimers).toBe(1);
  });

  it('advanceAsync lets continuations already pending run before the first timer fires', async () => {
    const clock = new FakeClock();
    const fired: number[] = [];
    void Promise.resolve().then(() => clock.setTimer(() => fired.push(clock.now()), 10));
    await clock.advanceAsync(10);
    expect(fired).toEqual([10]);
  });
});

describe('settle', () => {
  it('resolves after pending promise continuations have run', async () => {
    const steps: string[] = [];
    void Promise.resolve()
      .then(() => steps.push('one'))
      .then(() => steps.push('two'));
    await settle();
    expect(steps).toEqual(['one', 'two']);
  });
});
