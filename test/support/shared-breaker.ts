import { json, type UpstreamHandler } from './upstream';

/** Five attempts in the window, more than half failing, open it for 30 s. */
export const FIVE_ATTEMPTS_BREAKER = { volumeThreshold: 5, errorThresholdPercentage: 50, resetTimeoutMs: 30_000 };

/** An upstream that fails (500) the requests whose arguments ask it to (`explode: true`), and answers the rest. */
export const failsWhenAsked: UpstreamHandler = (request, response) => {
  const failing = (JSON.parse(request.body) as { explode?: boolean }).explode === true;
  return json(failing ? 500 : 200, failing ? { error: 'boom' } : { ok: true })(request, response);
};

/**
 * Tool `lookup` of the breaker specs: an http tool on lane `main` to `url`, one attempt of at most
 * 5 s, behind {@link FIVE_ATTEMPTS_BREAKER}.
 */
export function lookupTool(url: string) {
  return {
    lane: 'main',
    kind: 'http' as const,
    url,
    timeoutMs: 5_000,
    retry: { maxAttempts: 1 },
    breaker: FIVE_ATTEMPTS_BREAKER,
  };
}
