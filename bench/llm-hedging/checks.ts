/**
 * The hedging benchmark's checks: every answer right, and the upstream's, the clients' and the
 * service's accounts of each run agreeing, hedges where they should be and nowhere else.
 */
import type { MeasuredRun } from './measure-run';

/** The service's cap on hedges: a burst of 2, then a tenth of a hedge per request. */
const HEDGE_BURST = 2;
const HEDGE_SHARE = 0.1;
/** Attempt outcomes a run may show: served, or cancelled because the other attempt answered first. */
const CLEAN_OUTCOMES = new Set(['ok', 'hedge_lost']);

export function checkRun(run: MeasuredRun, requests: number): string[] {
  const problems: string[] = [];
  const at = `${run.name} run`;
  const { client, upstream, hedges } = run;
  const started = hedges.won + hedges.lost;
  if (client.sent !== requests) problems.push(`${at}: ${client.sent} of ${requests} requests sent before the time cap`);
  if (client.failed > 0 || client.ok !== client.sent) {
    problems.push(
      `${at}: ${client.failed} of ${client.sent} answers were not 200 with the upstream's text ` +
        `(${JSON.stringify(client.statuses)}); the first: ${client.firstFailure}`,
    );
  }
  if (upstream.rejected > 0) problems.push(`${at}: the upstream refused ${upstream.rejected} requests`);
  if (upstream.inFlight !== 0) problems.push(`${at}: the upstream still holds ${upstream.inFlight} calls`);
  // A hedge cancelled as it started (its first attempt answered meanwhile) may never reach the
  // upstream.
  if (upstream.requests < client.ok || upstream.requests > client.ok + started) {
    problems.push(
      `${at}: the upstream received ${upstream.requests} requests for ${client.ok} answers and ${started} hedges`,
    );
  }
  if (upstream.answered + upstream.cancelled + upstream.rejected !== upstream.requests) {
    problems.push(`${at}: the upstream's counts do not add up: ${JSON.stringify(upstream)}`);
  }
  if (upstream.cancelled > started) {
    problems.push(`${at}: ${upstream.cancelled} requests cancelled at the upstream for ${started} hedges`);
  }
  if (hedges.won !== client.hedged) {
    problems.push(`${at}: ${hedges.won} hedges won but ${client.hedged} answers said x-bulkhead-hedged: true`);
  }
  const outcomes = Object.keys(run.attempts).filter((outcome) => !CLEAN_OUTCOMES.has(outcome));
  if (outcomes.length > 0 || (run.attempts.ok ?? 0) !== client.ok) {
    problems.push(`${at}: attempts by outcome ${JSON.stringify(run.attempts)} for ${client.ok} answers`);
  }
  if (run.hedgeAfterMs === 0 && started > 0) problems.push(`${at}: ${started} hedges with hedging off`);
  if (run.hedgeAfterMs > 0) {
    if (upstream.slow > 0 && started === 0) {
      problems.push(`${at}: no hedge started, though ${upstream.slow} upstream answers were slow`);
    }
    if (started > HEDGE_BURST + HEDGE_SHARE * client.sent + 1) {
      problems.push(`${at}: ${started} hedges for ${client.sent} requests, over the route's 10 % share`);
    }
  }
  if (run.laneAfter.active !== 0 || run.laneAfter.waiting !== 0) {
    problems.push(`${at}: the lane still holds ${JSON.stringify(run.laneAfter)} once the upstream was idle`);
  }
  return problems;
}
