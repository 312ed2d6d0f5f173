import type { Breaker } from '../../src/circuit-breaker';
import { FakeClock } from '../../src/common/fake-clock';
import { installFakeTimers } from './fake-timers';

/**
 * A breaker spec's virtual time: before each test a fresh FakeClock (handed to `onClock`) drives
 * jest's fake timers; after it, every breaker in `made` is shut down and real timers return.
 */
export function breakersInVirtualTime(made: Breaker[], onClock: (clock: FakeClock) => void): void {
  beforeEach(() => {
    const clock = new FakeClock();
    onClock(clock);
    installFakeTimers(clock);
  });
  afterEach(() => {
    for (const item of made.splice(0)) item.shutdown();
    jest.useRealTimers();
  });
}
