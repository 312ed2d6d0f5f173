import { Module } from '@nestjs/common';
import { CommonModule } from '../common/nest';
import { LaneRegistry } from './lane-registry.service';
import { LANES_MODULE_OPTIONS, LanesConfigurableModule, type LanesModuleOptions } from './lanes.module-definition';
import { PriorityPolicy } from './priority-policy';
import { LanesController } from './lanes.controller';

/**
 * Lanes by name and `GET /v1/lanes`: `LanesModule.forRoot({ lanes })` or `forRootAsync(...)`;
 * the {@link PriorityPolicy} every path asks for a call's class.
 * `@Bulkhead` for controllers is in RoutePoliciesModule, which finds the lanes here.
 */
@Module({
  imports: [CommonModule],
  providers: [
    LaneRegistry,
    {
      provide: PriorityPolicy,
      inject: [LANES_MODULE_OPTIONS],
      useFactory: (options: LanesModuleOptions) => new PriorityPolicy(options.priority),
    },
  ],
  exports: [LaneRegistry, PriorityPolicy],
})
export class LanesModule extends LanesConfigurableModule {
  static readonly routes = [LanesController];
}
