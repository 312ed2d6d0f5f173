import { Global, Module } from '@nestjs/common';
import { Lifecycle } from './lifecycle.service';

@Global()
@Module({ providers: [Lifecycle], exports: [Lifecycle] })
export class LifecycleModule {}
