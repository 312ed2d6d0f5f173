/** `--name N` from the command line: an integer of at least `min`, or `fallback` when absent. */
export function option(name: string, fallback: number, min: number): number {
  const index = process.argv.indexOf(`--${name}`);
  if (index === -1) return fallback;
  const value = Number(process.argv[index + 1]);
  if (!Number.isInteger(value) || value < min) throw new Error(`--${name} must be an integer of at least ${min}`);
  return value;
}
