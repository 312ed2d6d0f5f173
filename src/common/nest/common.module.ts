import { Global, Module } from '@nestjs/common';
import { CLOCK, SystemClock } from '../clock';

/** Provides the one {@link CLOCK}; tests override it with a FakeClock. */
@Global()
@Module({
  providers: [{ provide: CLOCK, useClass: SystemClock }],
  exports: [CLOCK],
})
export class CommonModule {}
