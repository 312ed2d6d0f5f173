/** The proxy benchmark's targets, its runs, and their checks. */
import { failedCalls, reachProblem, type RoundRun } from '../support/rounds';

export type Target = 'direct' | 'forwarder' | 'service' | 'portkey';

/** A target's run in a round; `upstreamRequests` counts the requests the upstream's `/fast` received. */
export interface Run extends RoundRun {
  target: Target;
}

export function check(runs: Run[], connections: number) {
  const problems: string[] = [];
  const warnings: string[] = [];
  for (const run of runs) {
    const at = `round ${run.round} ${run.target}`;
    if (run.ok === 0) problems.push(`${at}: no call succeeded`);
    if (failedCalls(run) > 0) {
      const text = `${at}: ${run.non2xx} non-2xx (${JSON.stringify(run.statuses)}) and ${run.errors} errors`;
      // Portkey is the comparison, not the subject: its failures are reported, not fatal.
      (run.target === 'portkey' ? warnings : problems).push(text);
    }
    const unreached = reachProblem(run, at, connections);
    if (unreached) problems.push(unreached);
  }
  return { problems, warnings };
}
