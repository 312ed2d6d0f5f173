/** Reading the service's counters from its `/metrics`, parsed (bench/support/service.ts). */
import type { PromText } from '../../test/support/prom-text';

/** The sum of every sample of `name` whose labels include `labels` (0 when there is none). */
export function metricSum(metrics: PromText, name: string, labels: Record<string, string> = {}): number {
  return metrics.samples
    .filter((sample) => sample.name === name && Object.entries(labels).every(([k, v]) => sample.labels[k] === v))
    .reduce((total, sample) => total + sample.value, 0);
}

/** Each label value of `label` among the samples of `name`, with its sum: `{ ok: 2000, timeout: 1 }`. */
export function metricBy(metrics: PromText, name: string, label: string): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const sample of metrics.samples) {
    if (sample.name !== name) continue;
    const value = sample.labels[label] ?? '';
    sums[value] = (sums[value] ?? 0) + sample.value;
  }
  return sums;
}

/** `after - before`, label by label (a label only in `after` counts from 0). */
export function countsSince(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const since: Record<string, number> = {};
  for (const [label, value] of Object.entries(after)) {
    const grown = value - (before[label] ?? 0);
    if (grown !== 0) since[label] = grown;
  }
  return since;
}
