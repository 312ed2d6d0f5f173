import { Inject, Injectable } from '@nestjs/common';
import {
  type Audience,
  CLOCK,
  type Clock,
  eitherOf,
  EVERYONE,
  RANDOM,
  type Random,
  systemRandom,
  type Viewer,
} from '../common';
import { createAdaptiveLimit } from './adaptive';
import { LANES_MODULE_OPTIONS, type LanesModuleOptions } from './lanes.module-definition';
import { Lane } from './lane';
import type { LaneSnapshot } from './lane.types';

/** Every lane of the config, built once at start-up. */
@Injectable()
export class LaneRegistry {
  private readonly lanes: ReadonlyMap<string, Lane>;
  /** Who may use each lane, by what runs in it (tools, LLM routes, decorated routes): who may see its counts. */
  private readonly users = new Map<string, Audience>();

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

  /**
   * Says that `audience` may use `lane` (a tool of it, an LLM route of it, a decorated route):
   * a lane's counts are the traffic of what runs in it, so a lane only a route kept for some
   * tenants runs in is theirs to see. A lane nothing said it uses is everyone's.
   */
  usedBy(lane: string, audience: Audience): void {
    const earlier = this.users.get(lane);
    this.users.set(lane, earlier ? eitherOf(earlier, audience) : audience);
  }

  /** The lanes `viewer` may see: those something it may use runs in, and those nothing said it uses. */
  snapshotFor(viewer: Viewer): Record<string, LaneSnapshot> {
    const snapshot: Record<string, LaneSnapshot> = {};
    for (const [name, lane] of this.lanes) {
      if ((this.users.get(name) ?? EVERYONE)(viewer)) snapshot[name] = lane.snapshot();
    }
    return snapshot;
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
