/**
 * The streaming benchmark's checks: every stream whole and right, every one of them at the
 * upstream once, the service's own count of its attempts, nothing left in its lane.
 */
import type { StreamRun } from './summary';
import { ROUTES, type Variant } from './setup';

export function checkRun(run: StreamRun, streams: number): string[] {
  const at = `${run.variant} x${run.concurrency} round ${run.round} ${run.side}`;
  const problems: string[] = [];
  if (run.sent !== streams) problems.push(`${at}: ${run.sent} of ${streams} streams started before the time cap`);
  if (run.failed > 0 || run.ok !== run.sent) {
    problems.push(
      `${at}: ${run.failed} of ${run.sent} streams were not whole and right; the first: ${run.firstFailure}`,
    );
  }
  if (run.upstream.streams !== run.sent) {
    problems.push(`${at}: ${run.sent} streams but ${run.upstream.streams} reached the upstream`);
  }
  if (run.upstream.cancelled > 0) problems.push(`${at}: ${run.upstream.cancelled} streams cut at the upstream`);
  if (run.upstream.rejected > 0) problems.push(`${at}: the upstream refused ${run.upstream.rejected} requests`);
  return problems;
}

/**
 * The service's attempts during the measured runs (`bulkhead_llm_requests_total` by route and
 * outcome): each of its streams one `ok` attempt at its route, and nothing else.
 */
export function checkAttempts(runs: readonly StreamRun[], attempts: Record<string, Record<string, number>>): string[] {
  const problems: string[] = [];
  for (const [variant, route] of Object.entries(ROUTES) as Array<[Variant, string]>) {
    const streams = runs.filter((r) => r.side === 'service' && r.variant === variant).reduce((n, r) => n + r.ok, 0);
    const outcomes = attempts[route] ?? {};
    const others = Object.keys(outcomes).filter((outcome) => outcome !== 'ok');
    if ((outcomes.ok ?? 0) !== streams || others.length > 0) {
      problems.push(`route ${route}: attempts by outcome ${JSON.stringify(outcomes)} for ${streams} streams`);
    }
  }
  return problems;
}
