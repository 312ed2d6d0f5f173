import { Bench } from 'tinybench';

/**
 * One tinybench round of the in-process benchmarks: `timeMs` of measuring after a third of it
 * warming up, at least 8 iterations, and a task that throws fails the run instead of being
 * left out of the figures.
 */
export function microBench(timeMs: number): Bench {
  return new Bench({
    time: timeMs,
    warmupTime: Math.max(10, timeMs / 3),
    iterations: 8,
    warmupIterations: 4,
    throws: true,
  });
}
