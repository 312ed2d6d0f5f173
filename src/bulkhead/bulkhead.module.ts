import { Module } from '@nestjs/common';
import { BulkheadConfigurableModule } from './bulkhead.module-definition';
import { LaneRegistry } from './lane-registry.service';
import { LanesController } from './lanes.controller';

/**
 * Lanes from config and `GET /v1/lanes`. Import it with `BulkheadModule.forRoot({ lanes })`
 * or `forRootAsync(...)`; global unless `isGlobal: false`. `@Bulkhead` for controllers is in
 * route-policies/.
 */
@Module({
  controllers: [LanesController],
  providers: [LaneRegistry],
  exports: [LaneRegistry],
})
export class BulkheadModule extends BulkheadConfigurableModule {}
