import type { FakeClock } from '../../src/common/fake-clock';
import type { TestApp } from './create-app';

/**
 * Closes a test app that runs on a FakeClock. The shutdown drain waits on the clock, so a
 * call a failed test left running would hold `close()` forever; this moves virtual time on
 * (past any drain deadline) until the app has closed.
 */
export async function closeOnFakeClock(service: TestApp | undefined, clock: FakeClock): Promise<void> {
  if (!service) return;
  let closed = false;
  const closing = service.close().finally(() => {
    closed = true;
  });
  while (!closed) await clock.advanceAsync(1_000);
  await closing;
}
