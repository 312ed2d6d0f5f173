/** The hedging benchmark's figures: each run's latency and cost, and the two runs compared. */
import { fixed, printTable } from '../support/report';
import { percentile } from '../support/stats';
import type { MeasuredRun } from './measure-run';

/** The target: p99 at least this many times lower with hedging... */
export const TARGET_P99_RATIO = 5;
/** ...for at most this share of requests more at the upstream. */
export const TARGET_EXTRA_REQUESTS = 0.1;

export function summariseRun(run: MeasuredRun) {
  const sorted = run.latenciesMs;
  const clientRequests = run.client.sent;
  return {
    name: run.name,
    hedgeAfterMs: run.hedgeAfterMs,
    requests: clientRequests,
    p50Ms: percentile(sorted, 50),
    p95Ms: percentile(sorted, 95),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.at(-1) ?? Number.NaN,
    reqPerS: run.client.ok / run.client.durationS,
    upstreamRequests: run.upstream.requests,
    /** Upstream requests per client request, less one: what hedging cost the upstream. */
    extraRequests: run.upstream.requests / clientRequests - 1,
    /** Of the upstream's requests, the ones that drew a slow time. */
    upstreamSlow: run.upstream.slow,
    upstreamCancelled: run.upstream.cancelled,
    hedgesWon: run.hedges.won,
    hedgesLost: run.hedges.lost,
    hedgedAnswers: run.client.hedged,
    /** The slowest answers, to see the tail's shape (ms). */
    slowestMs: sorted.slice(-25).map((ms) => Number(ms.toFixed(1))),
  };
}

export type RunSummary = ReturnType<typeof summariseRun>;

/** The hedged run against the unhedged one, and whether the target was met. */
export function compareRuns(unhedged: RunSummary, hedged: RunSummary) {
  const p99Ratio = unhedged.p99Ms / hedged.p99Ms;
  const extra = hedged.extraRequests;
  return {
    /** p99 without hedging over p99 with it: how many times lower the tail got. */
    p99Ratio,
    p50Ratio: unhedged.p50Ms / hedged.p50Ms,
    maxRatio: unhedged.maxMs / hedged.maxMs,
    extraRequests: extra,
    target: {
      p99RatioAtLeast: TARGET_P99_RATIO,
      extraRequestsAtMost: TARGET_EXTRA_REQUESTS,
      met: p99Ratio >= TARGET_P99_RATIO && extra <= TARGET_EXTRA_REQUESTS,
    },
  };
}

export type RunsComparison = ReturnType<typeof compareRuns>;

const percent = (share: number) => `${fixed(100 * share, 1)} %`;

export function printRuns(runs: readonly RunSummary[], comparison: RunsComparison | undefined): void {
  printTable(
    'client-observed latency of every answer, and what the upstream received',
    runs.map((run) => ({
      run: run.name,
      'hedge after ms': String(run.hedgeAfterMs),
      requests: String(run.requests),
      'p50 ms': fixed(run.p50Ms, 1),
      'p95 ms': fixed(run.p95Ms, 1),
      'p99 ms': fixed(run.p99Ms, 1),
      'max ms': fixed(run.maxMs, 1),
      'req/s': fixed(run.reqPerS, 0),
      'upstream requests': `${run.upstreamRequests} (${run.upstreamSlow} slow)`,
      extra: percent(run.extraRequests),
      'hedges won/lost': `${run.hedgesWon}/${run.hedgesLost}`,
      'hedged answers': String(run.hedgedAnswers),
      'cancelled at upstream': String(run.upstreamCancelled),
    })),
  );
  if (!comparison) return;
  const { target } = comparison;
  process.stdout.write(
    `\np99 unhedged / hedged: ${fixed(comparison.p99Ratio, 2)}× (p50 ${fixed(comparison.p50Ratio, 2)}×, ` +
      `max ${fixed(comparison.maxRatio, 2)}×), for ${percent(comparison.extraRequests)} more requests at the upstream\n` +
      `target (p99 at least ${target.p99RatioAtLeast}× lower for at most ${percent(target.extraRequestsAtMost)} ` +
      `more requests): ${target.met ? 'met' : 'NOT met'}\n`,
  );
}
