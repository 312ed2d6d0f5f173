/**
 * CPU profiles of the service on the streaming route for `--profile`: a service process of its
 * own started with V8's `--cpu-prof` (bench/support/cpu-profile.ts), loaded with immediate
 * streams 16 at a time after a warm-up, its samples cut to the window of the measured load.
 */
import { cpuProfiler, monotonicUs, type ProfileSummary, summariseWindows } from '../support/cpu-profile';
import type { LoadResult } from '../support/load';
import { type ApiKey, startService } from '../support/service';
import { endpoint, serviceConfig } from './setup';
import type { SseUpstream } from './sse-upstream';
import { runStreams } from './stream-client';

export { printProfile, type ProfileSummary } from '../support/cpu-profile';

export interface ProfileSettings {
  concurrency: number;
  warmUpStreams: number;
  streams: number;
}

/** Profiles the service under immediate streams; `settle` waits until the upstream holds no stream. */
export async function profileStreams(
  upstream: SseUpstream,
  key: ApiKey,
  settings: ProfileSettings,
  settle: () => Promise<unknown>,
): Promise<ProfileSummary[]> {
  const profiler = cpuProfiler('llm-streaming');
  const service = await startService(serviceConfig(upstream, key, settings.concurrency), {
    name: 'service-profiled',
    nodeArgs: profiler.nodeArgs,
  });
  const load = (streams: number) =>
    runStreams({
      ...endpoint('service', 'immediate', upstream, { service: service.base }, key),
      streams,
      concurrency: settings.concurrency,
      maxDurationMs: 60_000,
    });
  await load(settings.warmUpStreams);
  await settle();
  const fromUs = monotonicUs();
  const run = await load(settings.streams);
  const toUs = monotonicUs();
  if (run.ok !== settings.streams) throw new Error(`the profiled service's streams failed: ${run.firstFailure}`);
  // The profile is written as the process exits, after its drain.
  await service.stop();
  // A stream is one "call" of the summary: its figures are per stream.
  const result: LoadResult = {
    reqPerS: run.ok / run.durationS,
    p50Ms: Number.NaN,
    p99Ms: Number.NaN,
    ok: run.ok,
    non2xx: 0,
    errors: run.failed,
    timeouts: 0,
    statuses: { 200: run.ok },
    durationS: run.durationS,
    autocannonP99Ms: Number.NaN,
  };
  return summariseWindows(profiler.read(), [
    { what: `immediate streams, ${settings.concurrency} at a time`, fromUs, toUs, result },
  ]);
}
