import { type DynamicModule, Global, Module } from '@nestjs/common';
import type { BulkheadConfig } from './config.schema';

/** Injection token of the validated {@link BulkheadConfig}. */
export const BULKHEAD_CONFIG = Symbol('BULKHEAD_CONFIG');

/** Provides the validated config to every module. Validation happens before Nest starts. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: BulkheadConfig): DynamicModule {
    return {
      module: ConfigModule,
      providers: [{ provide: BULKHEAD_CONFIG, useValue: config }],
      exports: [BULKHEAD_CONFIG],
    };
  }
}
