/** A source of uniform random numbers in [0, 1): jitter takes one instead of `Math.random`. */
export type Random = () => number;

/** Injection token of the {@link Random} source. */
export const RANDOM = Symbol('RANDOM');

// eslint-disable-next-line no-restricted-syntax -- the one place that reads the global random source
export const systemRandom: Random = () => Math.random();

/**
 * A repeatable {@link Random} (mulberry32): the same seed gives the same sequence, so tests
 * and benchmarks of jitter are deterministic.
 */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
