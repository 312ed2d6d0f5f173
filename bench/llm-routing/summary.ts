/** The routing benchmark's figures and checks: each strategy's latency and each deployment's share. */
import { fixed, printTable } from '../support/report';
import { percentile } from '../support/stats';
import type { MeasuredRun } from './measure-run';

export function summariseRun(run: MeasuredRun) {
  const sorted = run.latenciesMs;
  const { fast, slow } = run.deployments;
  const received = fast.requests + slow.requests;
  return {
    strategy: run.strategy,
    requests: run.client.sent,
    p50Ms: percentile(sorted, 50),
    p95Ms: percentile(sorted, 95),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.at(-1) ?? Number.NaN,
    reqPerS: run.client.ok / run.client.durationS,
    /** Of the requests the deployments received, the fast one's share. */
    fastShare: received === 0 ? Number.NaN : fast.requests / received,
    slowShare: received === 0 ? Number.NaN : slow.requests / received,
    /** The most requests each held at once, in work and queued. */
    fastPeak: fast.peakInFlight,
    slowPeak: slow.peakInFlight,
  };
}

export type RunSummary = ReturnType<typeof summariseRun>;

/** Every answer right, one upstream request per answer (no retry, no hedge), nothing left behind. */
export function checkRun(run: MeasuredRun, requests: number): string[] {
  const problems: string[] = [];
  const at = `${run.strategy} run`;
  const { client, deployments } = run;
  if (client.sent !== requests) problems.push(`${at}: ${client.sent} of ${requests} requests sent before the time cap`);
  if (client.failed > 0 || client.ok !== client.sent) {
    problems.push(
      `${at}: ${client.failed} of ${client.sent} answers were not 200 with the upstream's text ` +
        `(${JSON.stringify(client.statuses)}); the first: ${client.firstFailure}`,
    );
  }
  const received = deployments.fast.requests + deployments.slow.requests;
  if (received !== client.ok)
    problems.push(`${at}: the deployments received ${received} requests for ${client.ok} answers`);
  const rejected = deployments.fast.rejected + deployments.slow.rejected;
  if (rejected > 0) problems.push(`${at}: the deployments refused ${rejected} requests`);
  if (run.upstreamInFlight !== 0) problems.push(`${at}: the upstream still holds ${run.upstreamInFlight} calls`);
  if (run.strategy === 'ordered' && deployments.slow.requests > 0) {
    problems.push(`${at}: the spare deployment received ${deployments.slow.requests} requests, none failed`);
  }
  // lowest-latency may rightly keep to one deployment while its average stays the lower one.
  if (run.strategy === 'least-busy' && (deployments.fast.requests === 0 || deployments.slow.requests === 0)) {
    problems.push(`${at}: one deployment received nothing: ${JSON.stringify(deployments)}`);
  }
  return problems;
}

const percent = (share: number) => `${fixed(100 * share, 1)} %`;

export function printRuns(runs: readonly RunSummary[]): void {
  printTable(
    "client-observed latency of every answer, and each deployment's share",
    runs.map((run) => ({
      strategy: run.strategy,
      requests: String(run.requests),
      'p50 ms': fixed(run.p50Ms, 1),
      'p95 ms': fixed(run.p95Ms, 1),
      'p99 ms': fixed(run.p99Ms, 1),
      'max ms': fixed(run.maxMs, 1),
      'req/s': fixed(run.reqPerS, 0),
      'fast share': percent(run.fastShare),
      'slow share': percent(run.slowShare),
      'peak held fast/slow': `${run.fastPeak}/${run.slowPeak}`,
    })),
  );
}
