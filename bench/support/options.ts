/** `--name N` from the command line: an integer of at least `min`, or `fallback` when absent. */
export function option(name: string, fallback: number, min: number): number {
  const index = process.argv.indexOf(`--${name}`);
  if (index === -1) return fallback;
  const value = Number(process.argv[index + 1]);
  if (!Number.isInteger(value) || value < min) throw new Error(`--${name} must be an integer of at least ${min}`);
  return value;
}

/** What every load benchmark takes: `--quick` (one short pair), `--pairs`, `--duration`, `--connections`. */
export function runOptions(defaultConnections: number): {
  quick: boolean;
  pairs: number;
  durationS: number;
  connections: number;
} {
  const quick = process.argv.includes('--quick');
  return {
    quick,
    pairs: quick ? 1 : option('pairs', 4, 4),
    durationS: quick ? 1 : option('duration', 3, 1),
    connections: option('connections', defaultConnections, 1),
  };
}
