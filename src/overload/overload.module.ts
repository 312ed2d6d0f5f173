import {
  Inject,
  Injectable,
  Module,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
  Optional,
} from '@nestjs/common';
import { CLOCK, type Clock, RANDOM, type Random } from '../common';
import { CommonModule } from '../common/nest';
import { NodePressureSource } from './node-pressure-source';
import { OverloadGuard } from './overload-guard';
import {
  OVERLOAD_MODULE_OPTIONS,
  OverloadConfigurableModule,
  type OverloadModuleOptions,
} from './overload.module-definition';
import { overloadSchema } from './overload.options';

/** Starts the guard once the app is up, and stops its timer and monitor on shutdown. */
@Injectable()
class OverloadGuardLifecycle implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(@Optional() @Inject(OverloadGuard) private readonly guard: OverloadGuard | null) {}

  onApplicationBootstrap(): void {
    this.guard?.start();
  }

  onModuleDestroy(): void {
    this.guard?.stop();
  }
}

/**
 * The process overload guard: `OverloadModule.forRoot({ overload })`. Provides the
 * {@link OverloadGuard} admitCall asks before every admission, or null while `enabled` is false
 * (nothing is measured then).
 */
@Module({
  imports: [CommonModule],
  providers: [
    {
      provide: OverloadGuard,
      inject: [OVERLOAD_MODULE_OPTIONS, CLOCK, RANDOM],
      useFactory: (options: OverloadModuleOptions, clock: Clock, random: Random) => {
        const settings = overloadSchema.parse(options.overload ?? {});
        return settings.enabled ? new OverloadGuard(settings, new NodePressureSource(), clock, random) : null;
      },
    },
    OverloadGuardLifecycle,
  ],
  exports: [OverloadGuard],
})
export class OverloadModule extends OverloadConfigurableModule {}
