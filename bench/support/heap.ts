import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';

/** Bytes of the heap in use now. */
export function usedHeap(): number {
  return getHeapStatistics().used_heap_size;
}

/** A full collection, twice (the first may leave what finalisers freed); needs --expose-gc. */
export function forceGc(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  gc();
  gc();
}

/** When the collector ran, so a loop can say how many collections fell inside it. */
export class GcLog {
  private readonly times: number[] = [];
  private readonly observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) this.times.push(entry.startTime);
  });

  constructor() {
    if (typeof (globalThis as { gc?: unknown }).gc !== 'function') throw new Error('run with --expose-gc');
    this.observer.observe({ entryTypes: ['gc'] });
  }

  /** Collections that started between two `performance.now()` readings. */
  countBetween(start: number, end: number): number {
    return this.times.filter((at) => at >= start && at <= end).length;
  }

  stop(): void {
    this.observer.disconnect();
  }
}
