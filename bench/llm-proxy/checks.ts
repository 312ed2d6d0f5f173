/**
 * The LLM proxy benchmark's checks: every run's answers and upstream counts, the service's
 * own account of the runs (its metrics), and every process it started seen to end.
 */
import type { Child } from '../support/processes';
import { stopChild } from '../support/processes';
import { failedCalls, reachProblem } from '../support/rounds';
import type { Service } from '../support/service';
import { CACHED_ROUTE, ROUTE, TARGET_LABEL } from './sides';
import type { Run, Side } from './summary';

/**
 * Every answer of every run 200 with the expected content; every answered call of a proxy
 * reached the upstream once, as a provider would take it; a cache hit reached it never.
 */
export function check(runs: Run[], connections: number): string[] {
  const problems: string[] = [];
  for (const run of runs) {
    const at = `round ${run.round} ${run.side}`;
    if (run.ok === 0) problems.push(`${at}: no call succeeded`);
    if (failedCalls(run) > 0) {
      problems.push(
        `${at}: ${run.non2xx} non-2xx (${JSON.stringify(run.statuses)}), ${run.wrong2xx} 2xx with other content, ` +
          `${run.errors} errors${run.firstMismatch ? `; first unexpected body: ${run.firstMismatch}` : ''}`,
      );
    }
    if (run.upstreamRejected > 0) problems.push(`${at}: the upstream refused ${run.upstreamRejected} requests`);
    if (run.side === 'cached') {
      if (run.upstreamRequests > 0) problems.push(`${at}: ${run.upstreamRequests} cache hits reached the upstream`);
    } else {
      const unreached = reachProblem(run, at, connections);
      if (unreached) problems.push(unreached);
    }
  }
  return problems;
}

/**
 * The service's own account of the runs: every call routed to the normal pool, the uncached
 * route's answers each one attempt at the target, the cached route's answers hits.
 */
export async function checkMetrics(service: Service, runs: Run[], connections: number): Promise<string[]> {
  const { samples } = await service.metrics();
  const sum = (name: string, labels: Record<string, string>) =>
    samples
      .filter((sample) => sample.name === name && Object.entries(labels).every(([k, v]) => sample.labels[k] === v))
      .reduce((total, sample) => total + sample.value, 0);
  const answered = (side: Side) => runs.filter((run) => run.side === side).reduce((total, run) => total + run.ok, 0);
  const problems: string[] = [];
  const routed = samples.filter((sample) => sample.name === 'bulkhead_containment_routes_total' && sample.value > 0);
  const elsewhere = routed.filter((sample) => sample.labels.pool !== 'normal');
  if (routed.length === 0 || elsewhere.length > 0) {
    problems.push(`calls were not all routed to the normal pool: ${JSON.stringify(routed)}`);
  }
  // The chat route and both ingresses run the one route.
  const onRoute = ['service', 'messages', 'responses'] as const;
  const routeAnswers = onRoute.reduce((total, side) => total + answered(side), 0);
  const attempts = sum('bulkhead_llm_requests_total', { route: ROUTE, target: TARGET_LABEL, outcome: 'ok' });
  if (attempts < routeAnswers) {
    problems.push(`${routeAnswers} answers of route ${ROUTE} but ${attempts} good attempts at ${TARGET_LABEL}`);
  }
  // A run's end leaves up to one call per connection whose client left: `stopped`, not failed.
  // The embeddings route's runs may leave theirs too.
  const cutting: readonly Side[] = [...onRoute, 'embeddings'];
  const cut = runs.filter((run) => cutting.includes(run.side)).length + 1;
  const stopped = sum('bulkhead_llm_requests_total', { outcome: 'stopped' });
  const failed =
    sum('bulkhead_llm_requests_total', {}) - sum('bulkhead_llm_requests_total', { outcome: 'ok' }) - stopped;
  if (failed > 0 || stopped > cut * connections) {
    const outcomes = samples
      .filter((sample) => sample.name === 'bulkhead_llm_requests_total')
      .map((sample) => `${sample.labels.route} ${sample.labels.outcome} ${sample.value}`);
    problems.push(`attempts at a target failed, or more were stopped than runs cut: ${outcomes.join(', ')}`);
  }
  const hits = sum('bulkhead_llm_cache_total', { route: CACHED_ROUTE, result: 'hit' });
  if (hits < answered('cached'))
    problems.push(`${answered('cached')} answers of ${CACHED_ROUTE} but ${hits} cache hits`);
  return problems;
}

/** Stops every child; answers a problem for each still running after. */
export async function stopAll(children: readonly Child[]): Promise<string[]> {
  await Promise.all(children.map((child) => stopChild(child)));
  return children
    .filter((child) => isAlive(child.process.pid))
    .map((child) => `${child.name} (pid ${child.process.pid}) is still running`);
}

function isAlive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
