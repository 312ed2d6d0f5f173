/**
 * CPU profiles of the service on the LLM route for `--profile`: a service process of its own
 * started with V8's `--cpu-prof` (bench/support/cpu-profile.ts), loaded on the uncached route
 * and then on the cached one, each side's samples cut to the window of its measured load.
 */
import {
  cpuProfiler,
  monotonicUs,
  type ProfileSummary,
  type ProfileWindow,
  summariseWindows,
} from '../support/cpu-profile';
import { type ApiKey, startService } from '../support/service';
import { runCheckedLoad } from './checked-load';
import type { OpenAiUpstream } from './openai-upstream';
import { CACHED_ROUTE, ROUTE, serviceConfig, serviceEndpoint } from './sides';

export { printProfile, type ProfileSummary } from '../support/cpu-profile';

export interface ProfileSettings {
  connections: number;
  warmUpS: number;
  durationS: number;
}

/**
 * Profiles the service under the uncached and then the cached side's load (after a warm-up of
 * each), answers both summaries. `settle` waits until the upstream holds no call.
 */
export async function profileService(
  upstream: OpenAiUpstream,
  key: ApiKey,
  settings: ProfileSettings,
  settle: () => Promise<unknown>,
): Promise<ProfileSummary[]> {
  const profiler = cpuProfiler('llm');
  const service = await startService(serviceConfig(upstream, key, settings.connections), {
    name: 'service-profiled',
    nodeArgs: profiler.nodeArgs,
  });
  const windows: ProfileWindow[] = [];
  for (const [what, cached] of [
    [`route ${ROUTE} (cache off)`, false],
    [`route ${CACHED_ROUTE} (cache hits)`, true],
  ] as const) {
    const endpoint = serviceEndpoint(service.base, key, cached);
    await runCheckedLoad({ ...endpoint, connections: settings.connections, durationS: settings.warmUpS });
    await settle();
    const fromUs = monotonicUs();
    const result = await runCheckedLoad({
      ...endpoint,
      connections: settings.connections,
      durationS: settings.durationS,
    });
    windows.push({ what, fromUs, toUs: monotonicUs(), result });
    if (result.ok === 0 || result.non2xx + result.errors + result.wrong2xx > 0) {
      throw new Error(
        `the profiled service's ${what} failed: ${JSON.stringify(result.statuses)} ${result.firstMismatch}`,
      );
    }
  }
  // The profile is written as the process exits, after its drain.
  await service.stop();
  return summariseWindows(profiler.read(), windows);
}
