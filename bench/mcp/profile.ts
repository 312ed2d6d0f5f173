/**
 * CPU profile of the service for the MCP benchmark's `--profile`: a service process of its own
 * started with V8's `--cpu-prof` (bench/support/cpu-profile.ts), loaded in turn by the REST
 * callers, the raw `/mcp` callers (event-stream answers) and the `kind: mcp` tool's callers,
 * each side's samples cut to the window of its measured load, so the frames that an MCP call
 * adds to a REST call show side by side; then a second one, answering JSON, under the raw
 * `/mcp` callers.
 */
import {
  cpuProfiler,
  monotonicUs,
  type ProfileSummary,
  type ProfileWindow,
  summariseWindows,
} from '../support/cpu-profile';
import type { LoadResult } from '../support/load';
import { startService } from '../support/service';
import { type LoopResult, runClosedLoop } from './closed-loop';
import { type Endpoint, rawMcpCallers, restCallers, type Side, type SideCallers } from './sides';

export { printProfile, type ProfileSummary } from '../support/cpu-profile';

/** The sides profiled on the service answering event streams, in this order. */
export const SSE_SIDES: readonly Side[] = ['rest', 'mcp-sse', 'via-bulkhead'];
/** The side profiled on the service answering JSON. */
export const JSON_SIDES: readonly Side[] = ['mcp-json'];

export interface ProfileSettings {
  workers: number;
  warmUpS: number;
  durationS: number;
}

/** Profiles a service started on `config` under each of `sides`' load in turn. */
export async function profileService(
  config: object,
  sides: readonly Side[],
  headers: Record<string, string>,
  settings: ProfileSettings,
): Promise<ProfileSummary[]> {
  const profiler = cpuProfiler('mcp');
  const service = await startService(config, { name: 'service-profiled', nodeArgs: profiler.nodeArgs });
  const endpoint: Endpoint = { base: service.base, headers };
  const callersOf: Record<string, () => Promise<SideCallers>> = {
    rest: async () => restCallers(endpoint, settings.workers),
    'mcp-sse': () => rawMcpCallers(endpoint, settings.workers),
    'mcp-json': () => rawMcpCallers(endpoint, settings.workers),
    'via-bulkhead': () => rawMcpCallers(endpoint, settings.workers, 'up.echo'),
  };
  const windows: ProfileWindow[] = [];
  for (const side of sides) {
    const { callers, close } = await callersOf[side]!();
    await runClosedLoop(callers, settings.warmUpS);
    const fromUs = monotonicUs();
    const result = await runClosedLoop(callers, settings.durationS);
    windows.push({ what: `side ${side}`, fromUs, toUs: monotonicUs(), result: asLoadResult(result) });
    await close();
    if (result.ok === 0 || result.failed > 0) {
      throw new Error(`the profiled service's side ${side} answered ${result.ok} calls well, ${result.failed} not`);
    }
  }
  // The profile is written as the process exits, after its drain.
  await service.stop();
  return summariseWindows(profiler.read(), windows);
}

/** A closed loop's figures in the shape the profile summary reads (calls, duration, rate). */
function asLoadResult(loop: LoopResult): LoadResult {
  return {
    reqPerS: loop.reqPerS,
    p50Ms: loop.p50Ms,
    p99Ms: loop.p99Ms,
    ok: loop.ok,
    non2xx: loop.failed,
    errors: 0,
    timeouts: 0,
    statuses: {},
    durationS: loop.durationS,
    autocannonP99Ms: loop.p99Ms,
  };
}
