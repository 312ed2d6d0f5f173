/**
 * CPU profiles of the service on the LLM route for `--profile`: a service process of its own
 * started with V8's `--cpu-prof` (the service has no profiling hook to call, and the measured
 * one must not pay for the sampler), loaded on the uncached route and then on the cached one.
 * The profile covers the process's whole life, so each side's samples are cut to the window of
 * its measured load: start-up and warm-up would otherwise count.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type { Profiler } from 'node:inspector';
import { tmpdir } from 'node:os';
import { relative, resolve } from 'node:path';
import { summariseProfile } from '../overhead/profile';
import { onCleanup, ROOT } from '../support/processes';
import { fixed, printTable } from '../support/report';
import { type ApiKey, startService } from '../support/service';
import { type CheckedLoadResult, runCheckedLoad } from './checked-load';
import type { OpenAiUpstream } from './openai-upstream';
import { CACHED_ROUTE, ROUTE, serviceConfig, serviceEndpoint } from './sides';

/** V8's default of 1 ms leaves a few hundred samples per second of a busy core. */
const SAMPLE_INTERVAL_US = 200;

export interface ProfileSettings {
  connections: number;
  warmUpS: number;
  durationS: number;
}

export type ProfileSummary = ReturnType<typeof summariseProfile> & {
  what: string;
  /** Self time of the service's own functions (dist/), each, most first. */
  ownFrames: Array<{ name: string; percent: number; usPerCall: number }>;
  /** The share of the busy time in the service's own functions, and per call. */
  own: { percent: number; usPerCall: number };
};

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
  const dir = mkdtempSync(resolve(tmpdir(), 'bulkhead-llm-profile-'));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  const service = await startService(serviceConfig(upstream, key, settings.connections), {
    name: 'service-profiled',
    nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-interval=${SAMPLE_INTERVAL_US}`],
  });
  const windows: Array<{ what: string; fromUs: number; toUs: number; result: CheckedLoadResult }> = [];
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
  const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
  if (!file || !existsSync(resolve(dir, file))) throw new Error(`the profiled service wrote no profile in ${dir}`);
  const profile = JSON.parse(readFileSync(resolve(dir, file), 'utf8')) as Profiler.Profile;
  return windows.map(({ what, fromUs, toUs, result }) => {
    const cut = cutTo(profile, fromUs, toUs);
    const expected = (toUs - fromUs) / SAMPLE_INTERVAL_US;
    // A window that misses most of its samples was not cut on the profile's clock.
    if ((cut.samples?.length ?? 0) < expected / 4) {
      throw new Error(`the profile holds ${cut.samples?.length} samples of ${what}, expected about ${expected}`);
    }
    return { what, ...summariseProfile(cut, result), ...ownCode(cut, result.ok) };
  });
}

/** V8's profile times and process.hrtime both read the monotonic clock: µs here as there. */
function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1_000n);
}

/** The samples of `profile` taken between `fromUs` and `toUs`. */
function cutTo(profile: Profiler.Profile, fromUs: number, toUs: number): Profiler.Profile {
  const samples: number[] = [];
  const timeDeltas: number[] = [];
  let at = profile.startTime;
  let last = fromUs;
  (profile.samples ?? []).forEach((id, i) => {
    at += profile.timeDeltas?.[i] ?? 0;
    if (at < fromUs || at > toUs) return;
    samples.push(id);
    timeDeltas.push(at - last);
    last = at;
  });
  return { ...profile, startTime: fromUs, endTime: toUs, samples, timeDeltas };
}

/** Self time of the functions in dist/ (V8 counts a function it inlined in its caller). */
function ownCode(profile: Profiler.Profile, calls: number): Pick<ProfileSummary, 'ownFrames' | 'own'> {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  const frames = new Map<string, number>();
  let busyUs = 0;
  let ownUs = 0;
  samples.forEach((id, i) => {
    const { callFrame } = byId.get(id)!;
    // As summariseProfile does: a sample's time is the gap until the next one.
    const us = deltas[i + 1] ?? 0;
    if (callFrame.functionName === '(idle)') return;
    busyUs += us;
    const path = callFrame.url.startsWith('file://') ? decodeURIComponent(callFrame.url.slice(7)) : callFrame.url;
    const place = path ? relative(ROOT, path) : '';
    if (!place.startsWith('dist/')) return;
    ownUs += us;
    const name = `${callFrame.functionName || '(anonymous)'} ${place}:${callFrame.lineNumber + 1}`;
    frames.set(name, (frames.get(name) ?? 0) + us);
  });
  const per = Math.max(1, calls);
  return {
    own: { percent: (100 * ownUs) / busyUs, usPerCall: ownUs / per },
    ownFrames: [...frames]
      .map(([name, us]) => ({ name, percent: (100 * us) / busyUs, usPerCall: us / per }))
      .sort((x, y) => y.usPerCall - x.usPerCall)
      .slice(0, 30),
  };
}

export function printProfile(profile: ProfileSummary, top: number): void {
  const rows = (shares: Array<{ name: string; percent: number; usPerCall: number }>) =>
    shares.slice(0, top).map((share) => ({
      frame: share.name,
      '%': fixed(share.percent, 1),
      'µs/call': fixed(share.usPerCall, 2),
    }));
  printTable(
    `CPU profile, ${profile.what}: ${profile.calls} calls in ${fixed(profile.durationS, 1)} s ` +
      `(${fixed(profile.reqPerS, 0)} req/s under the profiler), ${fixed(profile.busyUsPerCall, 1)} µs busy per call; ` +
      `top ${top} self-time frames`,
    rows(profile.frames),
  );
  printTable('by where the code lives', rows(profile.areas));
  printTable(
    `the service's own code (dist/): ${fixed(profile.own.percent, 1)} % of the busy time, ` +
      `${fixed(profile.own.usPerCall, 1)} µs per call; top ${top} frames`,
    rows(profile.ownFrames),
  );
}
