import { Controller, Get } from '@nestjs/common';
import type { LaneSnapshot } from './lane.types';
import { LaneRegistry } from './lane-registry.service';

@Controller('v1/lanes')
export class LanesController {
  constructor(private readonly lanes: LaneRegistry) {}

  @Get()
  list(): { lanes: Record<string, LaneSnapshot> } {
    return { lanes: this.lanes.snapshot() };
  }
}
