import { Module } from '@nestjs/common';
import { CommonModule } from '../common/nest';
import { LifecycleConfigurableModule } from './lifecycle.module-definition';
import { Lifecycle } from './lifecycle.service';
import { UnexpectedErrors } from './unexpected-errors';

/**
 * The drain on shutdown: stop admission, let accepted calls finish, stop the rest. Needs the
 * lanes. Also where errors nobody handled are reported, once `installProcessSafetyNet` listens.
 */
@Module({ imports: [CommonModule], providers: [Lifecycle, UnexpectedErrors], exports: [Lifecycle, UnexpectedErrors] })
export class LifecycleModule extends LifecycleConfigurableModule {}
