/** What the servers of the overhead benchmark counted: every measured call went the whole way. */
import type { CircuitSnapshot } from '../../src/circuit-breaker';
import type { PromText } from '../../test/support/prom-text';
import { POLICY_BREAKER, POLICY_LANE } from '../support/bare-app';
import { ECHO_COST_USD, SIDES, TOOL_LANE } from './sides';
import { sumOf } from './summary';

/**
 * The pipeline's metrics after `answered` echo calls of `tenant`: every call counted ok,
 * admitted by its lane and charged to the budget, no rate-limit decision failed open, none
 * routed to the isolated pool. Problems go into `problems`; answers what was counted.
 */
export function checkPipeline(metrics: PromText, at: string, answered: number, tenant: string, problems: string[]) {
  const echoOk = sumOf(metrics, 'bulkhead_calls_total', { tool: 'echo', outcome: 'ok' });
  const accepted = sumOf(metrics, 'bulkhead_admissions_total', { lane: TOOL_LANE, result: 'accepted' });
  const spentUsd = sumOf(metrics, 'bulkhead_budget_spent_usd_total', { tenant });
  const failedOpen = sumOf(metrics, 'bulkhead_rate_limit_failed_open_total', {});
  const isolated = sumOf(metrics, 'bulkhead_containment_routes_total', { pool: 'isolated' });
  if (echoOk < answered) problems.push(`${at}: ${echoOk} echo calls ok in the metrics, < ${answered} answered`);
  if (accepted < answered) problems.push(`${at}: lane ${TOOL_LANE} admitted ${accepted} < ${answered}`);
  // Each call is charged its one attempt; allow for float rounding in the metric.
  if (!(spentUsd >= answered * ECHO_COST_USD * 0.999)) {
    problems.push(`${at}: the budget was charged $${spentUsd} for ${answered} calls`);
  }
  if (failedOpen > 0) problems.push(`${at}: ${failedOpen} rate-limit decisions failed open`);
  if (isolated > 0) problems.push(`${at}: ${isolated} calls routed to the isolated pool`);
  return { echoOk, accepted, spentUsd, failedOpen, isolated };
}

/** The decorated route after `answered` calls: its lane admitted each, its breaker is closed with successes. */
export function checkRoutePolicies(
  metrics: PromText,
  circuit: CircuitSnapshot | undefined,
  answered: number,
  problems: string[],
) {
  const accepted = sumOf(metrics, 'bulkhead_admissions_total', { lane: POLICY_LANE, result: 'accepted' });
  if (circuit?.state !== 'closed' || !(circuit.successes > 0)) {
    problems.push(`breaker ${POLICY_BREAKER} of the route: ${JSON.stringify(circuit)}, not closed with successes`);
  }
  if (accepted < answered) {
    problems.push(`${SIDES.policies}: lane ${POLICY_LANE} admitted ${accepted} < ${answered} answered`);
  }
  return { accepted, circuit };
}
