/** What the guard reads of the process at each sample: the loop's delay and the heap. */
export interface PressureReading {
  /** The event loop's delay over the window since the last reading (its p99), in milliseconds. */
  eventLoopDelayMs: number;
  /** The heap in use over the heap's limit, 0-1. */
  heapUsedRatio: number;
}

/**
 * Where the guard's readings come from: the process itself ({@link NodePressureSource}), or a
 * test's numbers. `read` is called once per sample window, never per call.
 */
export interface PressureSource {
  /** The window since the last read, which starts a new window. */
  read(): PressureReading;
  /** Stops measuring; the source is not read again. */
  close(): void;
}
