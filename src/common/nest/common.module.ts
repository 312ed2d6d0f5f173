import { Global, Module } from '@nestjs/common';
import { CLOCK, SystemClock } from '../clock';
import { RANDOM, systemRandom } from '../random';

/** Provides the one {@link CLOCK} and the {@link RANDOM} source; tests override them. */
@Global()
@Module({
  providers: [
    { provide: CLOCK, useClass: SystemClock },
    { provide: RANDOM, useValue: systemRandom },
  ],
  exports: [CLOCK, RANDOM],
})
export class CommonModule {}
