/** The slow lane sampled during a run: was it kept full? */
import { setTimeout as wait } from 'node:timers/promises';
import type { LaneSnapshot } from '../../src/bulkhead';
import type { Service } from '../support/service';
import { median } from '../support/stats';
import { type Configuration, SAMPLE_EVERY_MS, SLOW } from './setup';

/** What the lanes looked like, sampled every 100 ms during a run. */
export interface LaneSamples {
  samples: number;
  slowActive: { min: number; median: number; max: number };
  slowWaiting: { min: number; median: number; max: number };
  /** Samples with the slow lane at exactly C running and (lanes) Q waiting. */
  fullShare: number;
}

/** Samples the lanes every 100 ms until `stop()`. */
export function sampleLanes(service: Service, headers: Record<string, string>, configuration: Configuration) {
  const seen: LaneSnapshot[] = [];
  let stopped = false;
  const sampling = (async () => {
    while (!stopped) {
      seen.push((await service.lanes(headers))[configuration.slowLane]!);
      await wait(SAMPLE_EVERY_MS);
    }
  })();
  return async (saturated: boolean): Promise<LaneSamples> => {
    stopped = true;
    await sampling;
    const active = seen.map((lane) => lane.active);
    const waiting = seen.map((lane) => lane.waiting);
    const full = seen.filter(
      (lane) =>
        lane.active === configuration.slowLaneConcurrency &&
        (configuration.name === 'shared' || lane.waiting === SLOW.queueCapacity),
    ).length;
    const summary = (values: number[]) => ({
      min: Math.min(...values),
      median: median(values),
      max: Math.max(...values),
    });
    return {
      samples: seen.length,
      slowActive: summary(active),
      slowWaiting: summary(waiting),
      fullShare: saturated ? full / seen.length : 0,
    };
  };
}
