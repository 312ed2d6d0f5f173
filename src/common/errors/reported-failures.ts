/**
 * Failures already reported as a call's outcome (`CallOutcomes.finish`), so already in the
 * ledger, the metrics and the call's log line. The envelope filter writes a line of its own only
 * for the others: requests refused before any call began (an unknown tool, a bad header, no
 * key). Weak: a failure is forgotten with the last reference to it.
 */
const reported = new WeakSet<object>();

export function markReported(failure: unknown): void {
  if (typeof failure === 'object' && failure !== null) reported.add(failure);
}

export function wasReported(failure: unknown): boolean {
  return typeof failure === 'object' && failure !== null && reported.has(failure);
}
