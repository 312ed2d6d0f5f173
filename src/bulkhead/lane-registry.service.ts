import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, type Clock } from '../common';
import { LANES_MODULE_OPTIONS, type LanesModuleOptions } from './lanes.module-definition';
import { Lane } from './lane';
import type { LaneSnapshot } from './lane.types';

/** Every lane of the config, built once at start-up. */
@Injectable()
export class LaneRegistry {
  private readonly lanes: ReadonlyMap<string, Lane>;

  constructor(@Inject(LANES_MODULE_OPTIONS) options: LanesModuleOptions, @Inject(CLOCK) clock: Clock) {
    const lanes = new Map<string, Lane>();
    for (const [name, config] of Object.entries(options.lanes)) {
      lanes.set(name, new Lane({ name, clock, ...config }));
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
