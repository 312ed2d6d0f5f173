/** Waiting until a loopback upstream has finished with every call a run left behind. */
import { waitUntil } from './service';

/** What the wait reads of an upstream: requests received so far, and how many it holds now. */
export interface QuietStats {
  requests: number;
  inFlight: number;
}

/**
 * Until the upstream has held no call and received no request for `quietMs`: a proxy's cancelled
 * or late calls end a little after its client's answers. Answers its counts then; fails after
 * `timeoutMs`.
 */
export async function untilQuiet<Stats extends QuietStats>(
  stats: () => Promise<Stats>,
  quietMs = 250,
  timeoutMs = 10_000,
): Promise<Stats> {
  let last = await stats();
  let quietSince = performance.now();
  await waitUntil(
    'the upstream is idle',
    async () => {
      const now = await stats();
      if (now.inFlight > 0 || now.requests !== last.requests) quietSince = performance.now();
      last = now;
      return performance.now() - quietSince >= quietMs;
    },
    timeoutMs,
    50,
  );
  return last;
}
