import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, type Clock, RANDOM, type Random, systemRandom } from '../common';
import { createAdaptiveLimit } from './adaptive';
import { LANES_MODULE_OPTIONS, type LanesModuleOptions } from './lanes.module-definition';
import { Lane } from './lane';
import type { LaneSnapshot } from './lane.types';

/** Every lane of the config, built once at start-up. */
@Injectable()
export class LaneRegistry {
  private readonly lanes: ReadonlyMap<string, Lane>;

  constructor(
    @Inject(LANES_MODULE_OPTIONS) options: LanesModuleOptions,
    @Inject(CLOCK) clock: Clock,
    // Jitter of the Vegas probe only; built outside Nest (benchmarks, specs), the global source.
    @Inject(RANDOM) random: Random = systemRandom,
  ) {
    const lanes = new Map<string, Lane>();
    for (const [name, { adaptive, ...config }] of Object.entries(options.lanes)) {
      const limit = adaptive && createAdaptiveLimit(name, adaptive, config.concurrency, random);
      lanes.set(name, new Lane({ name, clock, ...config, adaptive: limit }));
    }
    this.lanes = lanes;
  }

  get(name: string): Lane | undefined {
    return this.lanes.get(name);
  }

  all(): IterableIterator<Lane> {
    return this.lanes.values();
  }

  names(): string[] {
    return [...this.lanes.keys()];
  }

  snapshot(): Record<string, LaneSnapshot> {
    const snapshot: Record<string, LaneSnapshot> = {};
    for (const [name, lane] of this.lanes) snapshot[name] = lane.snapshot();
    return snapshot;
  }

  /** Stops admission on every lane; accepted calls go on. */
  close(): void {
    for (const lane of this.lanes.values()) lane.close();
  }

  whenIdle(): Promise<void> {
    return Promise.all([...this.lanes.values()].map((lane) => lane.whenIdle())).then(() => undefined);
  }

  /** Ends every accepted call now, answering it with `reason`. */
  stopNow(reason: unknown): void {
    for (const lane of this.lanes.values()) lane.stopNow(reason);
  }
}
