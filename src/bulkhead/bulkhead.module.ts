import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { BulkheadConfigurableModule } from './bulkhead.module-definition';
import { BulkheadInterceptor } from './bulkhead.interceptor';
import { BulkheadRoutesValidator } from './bulkhead-routes.validator';
import { LaneRegistry } from './lane-registry.service';
import { LanesController } from './lanes.controller';

/**
 * Lanes from config, `GET /v1/lanes`, and `@Bulkhead` for controllers. Import it with
 * `BulkheadModule.forRoot({ lanes })` or `forRootAsync(...)`; global unless `isGlobal: false`.
 */
@Module({
  imports: [DiscoveryModule],
  controllers: [LanesController],
  providers: [LaneRegistry, BulkheadInterceptor, BulkheadRoutesValidator],
  exports: [LaneRegistry, BulkheadInterceptor],
})
export class BulkheadModule extends BulkheadConfigurableModule {}
