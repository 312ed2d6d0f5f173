/** How long a run of `--quick` lasts: long enough to go through every path, too short to mean anything. */
export const QUICK_DURATION_S = 0.5;

/** `--name N` from the command line: an integer of at least `min`, or `fallback` when absent. */
export function option(name: string, fallback: number, min: number): number {
  const index = process.argv.indexOf(`--${name}`);
  if (index === -1) return fallback;
  const value = Number(process.argv[index + 1]);
  if (!Number.isInteger(value) || value < min) throw new Error(`--${name} must be an integer of at least ${min}`);
  return value;
}

/**
 * What every load benchmark takes: `--quick` (one short pair), `--pairs`, `--duration`,
 * `--connections`, each with the benchmark's own default.
 */
export function runOptions(defaults: { connections: number; pairs?: number; durationS?: number }): {
  quick: boolean;
  pairs: number;
  durationS: number;
  connections: number;
} {
  const quick = process.argv.includes('--quick');
  return {
    quick,
    pairs: quick ? 1 : option('pairs', defaults.pairs ?? 4, 4),
    durationS: quick ? QUICK_DURATION_S : option('duration', defaults.durationS ?? 3, 1),
    connections: option('connections', defaults.connections, 1),
  };
}
