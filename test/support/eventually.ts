import { setTimeout as wait } from 'node:timers/promises';

/**
 * Waits until `check` passes, polling; for e2e steps that depend on another process or a
 * socket (a request reaching the upstream), never for timing claims. The default bound is
 * generous (a loaded laptop stalls a process for seconds); a check that passes returns at once,
 * so only a failing test pays it.
 */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 30_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (performance.now() > deadline) throw error;
      await wait(5);
    }
  }
}
