import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import type { PressureReading, PressureSource } from './pressure-source';

/** The delay histogram's resolution: its own timer's period, so also its floor in a reading. */
const RESOLUTION_MS = 10;

/**
 * The process's own loop delay (`perf_hooks.monitorEventLoopDelay`, a libuv timer whose lateness
 * is the delay every callback waits) and heap (`v8.getHeapStatistics`). The p99 of a window,
 * not its mean: a loop blocked 200 ms at once is what a caller waits, though most timer ticks
 * around it were on time. The only file that touches perf_hooks and v8.
 */
export class NodePressureSource implements PressureSource {
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });

  constructor() {
    this.histogram.enable();
  }

  read(): PressureReading {
    // An empty window (the loop blocked throughout, or read twice in one turn) reads 0, not
    // NaN: the guard's own late timer shows a loop blocked throughout.
    const delayNs = this.histogram.count > 0 ? this.histogram.percentile(99) : 0;
    this.histogram.reset();
    const heap = getHeapStatistics();
    return { eventLoopDelayMs: delayNs / 1e6, heapUsedRatio: heap.used_heap_size / heap.heap_size_limit };
  }

  close(): void {
    this.histogram.disable();
  }
}
