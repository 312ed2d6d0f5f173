/** Small statistics for benchmark reports: medians and spreads, never a lone absolute. */

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

/** Min and max: how noisy the runs were. */
export function spread(values: readonly number[]): { min: number; max: number } {
  return { min: Math.min(...values), max: Math.max(...values) };
}

/** Median and spread of a series: what a table row shows. */
export function summary(values: readonly number[]): { median: number; min: number; max: number } {
  return { median: median(values), ...spread(values) };
}

/** Per-pair ratios b[i] / a[i] of alternated runs, summarised: median and spread. */
export function pairedRatio(a: readonly number[], b: readonly number[]): { median: number; min: number; max: number } {
  const ratios = a.map((value, i) => b[i]! / value);
  return { median: median(ratios), ...spread(ratios) };
}
