/**
 * CPU profiles of a server process under load, with V8's own sampler: the process is started
 * with `--cpu-prof` (a server with no profiling hook to call; the measured one must not pay for
 * the sampler), loaded, and stopped, which writes the profile; the samples are then cut to each
 * window of measured load (start-up and warm-up would otherwise count) and summarised: self time
 * by frame, by where the code lives, and the share of the process's own code (dist/ for the
 * service).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type { Profiler } from 'node:inspector';
import { tmpdir } from 'node:os';
import { relative, resolve } from 'node:path';
import { summariseProfile } from '../overhead/profile';
import type { LoadResult } from './load';
import { onCleanup, ROOT } from './processes';
import { fixed, printTable } from './report';

/** V8's default of 1 ms leaves a few hundred samples per second of a busy core. */
export const SAMPLE_INTERVAL_US = 200;

export type ProfileSummary = ReturnType<typeof summariseProfile> & {
  what: string;
  /** Self time of the process's own functions (under `ownCode`), each, most first. */
  ownFrames: Array<{ name: string; percent: number; usPerCall: number }>;
  /** The share of the busy time in the process's own functions, and per call. */
  own: { percent: number; usPerCall: number };
};

export interface CpuProfiler {
  /** Node's options for the profiled process. */
  readonly nodeArgs: string[];
  /** The profile it wrote as it exited (call once it has). */
  read(): Profiler.Profile;
}

/** A directory of its own (removed at cleanup) for the profile of one process. */
export function cpuProfiler(label: string): CpuProfiler {
  const dir = mkdtempSync(resolve(tmpdir(), `bulkhead-${label}-profile-`));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  return {
    nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-interval=${SAMPLE_INTERVAL_US}`],
    read: () => {
      const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
      if (!file || !existsSync(resolve(dir, file))) throw new Error(`the profiled ${label} wrote no profile in ${dir}`);
      return JSON.parse(readFileSync(resolve(dir, file), 'utf8')) as Profiler.Profile;
    },
  };
}

/** V8's profile times and process.hrtime both read the monotonic clock: µs here as there. */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1_000n);
}

/** A window of measured load: when it ran (`monotonicUs`) and what it answered. */
export interface ProfileWindow {
  what: string;
  fromUs: number;
  toUs: number;
  result: LoadResult;
}

/**
 * Each window's samples of `profile`, summarised; `ownCode` is the directory (from the
 * repository's root) of the process's own code. Fails for a window that holds far fewer
 * samples than its length gives: it was not cut on the profile's clock.
 */
export function summariseWindows(profile: Profiler.Profile, windows: ProfileWindow[], ownCode = 'dist/') {
  return windows.map(({ what, fromUs, toUs, result }): ProfileSummary => {
    const cut = cutTo(profile, fromUs, toUs);
    const expected = (toUs - fromUs) / SAMPLE_INTERVAL_US;
    if ((cut.samples?.length ?? 0) < expected / 4) {
      throw new Error(`the profile holds ${cut.samples?.length} samples of ${what}, expected about ${expected}`);
    }
    return { what, ...summariseProfile(cut, result), ...selfTimeUnder(cut, result.ok, ownCode) };
  });
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

/** Self time of the functions under `dir` (V8 counts a function it inlined in its caller). */
function selfTimeUnder(
  profile: Profiler.Profile,
  calls: number,
  dir: string,
): Pick<ProfileSummary, 'ownFrames' | 'own'> {
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
    if (!place.startsWith(dir)) return;
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

/** A profile's top `top` frames, its areas, and its own code's top frames, as tables. */
export function printProfile(profile: ProfileSummary, top: number, ownCode = 'dist/'): void {
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
    `its own code (${ownCode}): ${fixed(profile.own.percent, 1)} % of the busy time, ` +
      `${fixed(profile.own.usPerCall, 1)} µs per call; top ${top} frames`,
    rows(profile.ownFrames),
  );
}
