/** A V8 CPU profile of a server under load, summarised: self time by frame and by where the code lives. */
import type { Profiler } from 'node:inspector';
import { relative } from 'node:path';
import type { LoadResult } from '../support/load';
import { ROOT } from '../support/processes';

export interface Share {
  name: string;
  percent: number;
  /** Self time per call of the profiled run, in µs. */
  usPerCall: number;
}

/**
 * Self time by frame (function and place) and by where the code lives (package, dist/
 * directory, Node's internals, a native function by name), idle time left out. Frames V8
 * inlined count in the function they were inlined into.
 */
export function summariseProfile(profile: Profiler.Profile, run: LoadResult) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  const meanUs = samples.length > 0 ? (profile.endTime - profile.startTime) / samples.length : 0;
  // A sample's time is the gap until the next one.
  samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (deltas[i + 1] ?? meanUs)));

  const frames = new Map<string, number>();
  const areas = new Map<string, number>();
  let busyUs = 0;
  for (const [id, us] of selfUs) {
    const { callFrame } = byId.get(id)!;
    if (callFrame.functionName === '(idle)') continue;
    busyUs += us;
    const place = shortPlace(callFrame.url);
    const name = `${callFrame.functionName || '(anonymous)'}${place ? ` ${place}:${callFrame.lineNumber + 1}` : ''}`;
    frames.set(name, (frames.get(name) ?? 0) + us);
    const area = areaOf(callFrame.url, callFrame.functionName);
    areas.set(area, (areas.get(area) ?? 0) + us);
  }
  const calls = Math.max(1, run.ok);
  const ranked = (totals: Map<string, number>): Share[] =>
    [...totals]
      .map(([name, us]) => ({ name, percent: (100 * us) / busyUs, usPerCall: us / calls }))
      .sort((x, y) => y.percent - x.percent);
  return {
    calls: run.ok,
    durationS: run.durationS,
    reqPerS: run.reqPerS,
    samples: samples.length,
    busyUsPerCall: busyUs / calls,
    frames: ranked(frames).slice(0, 20),
    areas: ranked(areas),
  };
}

function shortPlace(url: string): string {
  if (!url) return '';
  const path = url.startsWith('file://') ? decodeURIComponent(url.slice('file://'.length)) : url;
  if (path.startsWith('node:')) return path;
  const modules = path.lastIndexOf('/node_modules/');
  return modules !== -1 ? path.slice(modules + '/node_modules/'.length) : relative(ROOT, path);
}

/** The package (or dist/ directory, or Node's internals) a frame's code comes from. */
function areaOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : `(native) ${functionName || '(anonymous)'}`;
  const place = shortPlace(url);
  if (place.startsWith('node:')) return 'node (internals)';
  if (place.startsWith('dist/')) return `bulkhead ${place.split('/').slice(0, 2).join('/')}`;
  if (url.includes('/node_modules/')) {
    const parts = place.split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  return place;
}
