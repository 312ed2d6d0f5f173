import { Module } from '@nestjs/common';
import { CommonModule } from '../common/nest';
import { LifecycleConfigurableModule } from './lifecycle.module-definition';
import { Lifecycle } from './lifecycle.service';

/** The drain on shutdown: stop admission, let accepted calls finish, stop the rest. Needs the lanes. */
@Module({ imports: [CommonModule], providers: [Lifecycle], exports: [Lifecycle] })
export class LifecycleModule extends LifecycleConfigurableModule {}
