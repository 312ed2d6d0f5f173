/**
 * The scale benchmark's lanes and tools: the service's config with L lanes and L echo tools
 * (tool `echo-<i>` in lane `lane-<i>`), and what reading them costs: `GET /metrics` and
 * `GET /v1/lanes`, timed from this process (request sent to last byte read) on an idle service.
 */
import { summary } from '../support/stats';
import { type ApiKey, call } from '../support/service';

export const ECHO_COST_USD = 0.000001;

/** Tool i's id, and its lane's name. */
export const toolOf = (i: number): string => `echo-${i}`;
export const laneOf = (i: number): string => `lane-${i}`;

/** The service's config: one tenant, `count` lanes, one echo tool in each, the whole pipeline. */
export function lanesConfig(key: ApiKey, count: number) {
  const lanes: Record<string, object> = {};
  const tools: Record<string, object> = {};
  for (let i = 0; i < count; i++) {
    lanes[laneOf(i)] = { concurrency: 64, queueCapacity: 64 };
    tools[toolOf(i)] = { kind: 'builtin', builtin: 'echo', lane: laneOf(i), costUsd: ECHO_COST_USD, tokens: 1 };
  }
  return {
    server: { shutdownDrainMs: 1_000 },
    auth: { allowAnonymous: false, apiKeys: [key.entry] },
    lanes,
    tools,
    rateLimits: { default: { rpm: 10_000_000, tpm: 1_000_000_000 } },
    budgets: { defaultUsd: 1_000 },
  };
}

export interface ReadFigures {
  /** Time to the last byte, ms: median (min-max) of the reads. */
  ms: { median: number; min: number; max: number };
  bytes: number;
  /** The body of the last read, for the checks. */
  text: string;
}

/** `reads` reads of `url` one after another (after one not counted); each must answer 200. */
export async function timeReads(url: string, reads: number, headers: Record<string, string> = {}) {
  await call(url, { headers, timeoutMs: 30_000 });
  const times: number[] = [];
  let last = '';
  for (let i = 0; i < reads; i++) {
    const start = performance.now();
    const answer = await call(url, { headers, timeoutMs: 30_000 });
    times.push(performance.now() - start);
    if (answer.status !== 200) throw new Error(`GET ${url} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
    last = answer.text;
  }
  return { ms: summary(times), bytes: Buffer.byteLength(last), text: last } satisfies ReadFigures;
}

/**
 * How the time of a read grows with lanes: µs per lane added from the fewest lanes to each
 * count (the medians' difference over the lanes added), and the last step's over the first's:
 * about 1 when the time is linear in lanes, more when it grows faster.
 */
export function growth(counts: readonly number[], medianMs: readonly number[]) {
  const perLaneUs = counts
    .slice(1)
    .map((count, i) => ((medianMs[i + 1]! - medianMs[0]!) * 1_000) / (count - counts[0]!));
  const steps = counts
    .slice(1)
    .map((count, i) => ((medianMs[i + 1]! - medianMs[i]!) * 1_000) / (count - counts[i]!))
    .filter(Number.isFinite);
  return { perLaneUs, lastStepOverFirst: steps.length >= 2 ? steps.at(-1)! / steps[0]! : Number.NaN };
}
