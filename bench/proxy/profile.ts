/**
 * CPU profiles for the proxy benchmark's `--profile`: the service (its http tool) and the
 * hand-written forwarder, each a process of its own under V8's `--cpu-prof`
 * (bench/support/cpu-profile.ts), under the same load as the measured runs, each cut to its
 * window of load; then what separates them, area by area (where the code lives), per call.
 */
import type { UpstreamServer } from '../support/upstream-server';
import { runLoad, type LoadOptions } from '../support/load';
import { cpuProfiler, monotonicUs, type ProfileSummary, summariseWindows } from '../support/cpu-profile';
import { stopChild } from '../support/processes';
import { fixed, printTable } from '../support/report';
import { startService } from '../support/service';
import { startForwarder } from './forwarder';

/** The forwarder's own code, for its profile's "own code" share. */
export const FORWARDER_CODE = 'bench/proxy/';

export interface ProfileSettings {
  connections: number;
  warmUpS: number;
  durationS: number;
}

/** One side's load: where to send it, what to send. */
type Endpoint = Pick<LoadOptions, 'url' | 'headers' | 'body'>;

/**
 * Profiles a service started on `serviceConfig` under `service(base)`'s load, then a forwarder
 * to `upstream`'s `/fast` under `forwarder(base)`'s (after a warm-up of each); `settle` waits
 * until the upstream holds no call. Answers the service's summary, then the forwarder's.
 */
export async function profileProxies(
  upstream: UpstreamServer,
  serviceConfig: object,
  endpoints: { service: (base: string) => Endpoint; forwarder: (base: string) => Endpoint },
  settings: ProfileSettings,
  settle: () => Promise<unknown>,
): Promise<ProfileSummary[]> {
  const serviceProfiler = cpuProfiler('proxy-service');
  const forwarderProfiler = cpuProfiler('forwarder');
  const [service, forwarder] = await Promise.all([
    startService(serviceConfig, { name: 'service-profiled', nodeArgs: serviceProfiler.nodeArgs }),
    startForwarder(upstream.url('/fast'), forwarderProfiler.nodeArgs, 'forwarder-profiled'),
  ]);
  const window = async (what: string, endpoint: Endpoint) => {
    const load = (durationS: number) => runLoad({ ...endpoint, connections: settings.connections, durationS });
    await load(settings.warmUpS);
    await settle();
    const fromUs = monotonicUs();
    const result = await load(settings.durationS);
    const toUs = monotonicUs();
    if (result.ok === 0 || result.non2xx + result.errors > 0) {
      throw new Error(`the profiled ${what} failed: ${JSON.stringify(result.statuses)}, ${result.errors} errors`);
    }
    return { what, fromUs, toUs, result };
  };
  const serviceWindow = await window('service, http tool', endpoints.service(service.base));
  const forwarderWindow = await window('hand-written forwarder', endpoints.forwarder(forwarder.base));
  // Each profile is written as its process exits.
  await service.stop();
  await stopChild(forwarder.child);
  const { code, signal } = await forwarder.child.exited;
  if (code !== 0) throw new Error(`the profiled forwarder ended with ${code ?? signal}: no profile`);
  return [
    ...summariseWindows(serviceProfiler.read(), [serviceWindow]),
    ...summariseWindows(forwarderProfiler.read(), [forwarderWindow], FORWARDER_CODE),
  ];
}

/** Self time per call by where the code lives, the service's beside the forwarder's, largest gap first. */
export function printGap(service: ProfileSummary, forwarder: ProfileSummary, top: number): void {
  const areas = new Set([...service.areas, ...forwarder.areas].map((area) => area.name));
  const usOf = (profile: ProfileSummary, name: string) =>
    profile.areas.find((area) => area.name === name)?.usPerCall ?? 0;
  const rows = [...areas]
    .map((name) => ({ name, service: usOf(service, name), forwarder: usOf(forwarder, name) }))
    .sort((x, y) => y.service - y.forwarder - (x.service - x.forwarder));
  printTable(
    `what separates them: self time per call by where the code lives, µs (busy: service ` +
      `${fixed(service.busyUsPerCall, 1)}, forwarder ${fixed(forwarder.busyUsPerCall, 1)})`,
    rows.slice(0, top).map((row) => ({
      area: row.name,
      service: fixed(row.service, 2),
      forwarder: fixed(row.forwarder, 2),
      'service - forwarder': fixed(row.service - row.forwarder, 2),
    })),
  );
}
