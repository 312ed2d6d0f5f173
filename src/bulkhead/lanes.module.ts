import { Module } from '@nestjs/common';
import { CommonModule } from '../common/nest';
import { LaneRegistry } from './lane-registry.service';
import { LanesConfigurableModule } from './lanes.module-definition';
import { LanesController } from './lanes.controller';

/**
 * Lanes by name and `GET /v1/lanes`: `LanesModule.forRoot({ lanes })` or `forRootAsync(...)`.
 * `@Bulkhead` for controllers is in RoutePoliciesModule, which finds the lanes here.
 */
@Module({
  imports: [CommonModule],
  providers: [LaneRegistry],
  exports: [LaneRegistry],
})
export class LanesModule extends LanesConfigurableModule {
  static readonly routes = [LanesController];
}
