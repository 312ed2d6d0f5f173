import { Controller, Get, Req } from '@nestjs/common';
import { requestViewer } from '../common/nest';
import type { LaneSnapshot } from './lane.types';
import { LaneRegistry } from './lane-registry.service';

@Controller('v1/lanes')
export class LanesController {
  constructor(private readonly lanes: LaneRegistry) {}

  /** The lanes of what the caller may use: a lane only a route kept for other tenants runs in is theirs. */
  @Get()
  list(@Req() request: object): { lanes: Record<string, LaneSnapshot> } {
    return { lanes: this.lanes.snapshotFor(requestViewer(request)) };
  }
}
