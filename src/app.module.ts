import { type DynamicModule, Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { BulkheadModule } from './bulkhead.module';
import type { BulkheadConfigNamespace, BulkheadConfigType } from './config';
import { ExampleModule } from './example/example.module';

export interface AppModuleOptions {
  /** The config namespace: `bulkheadConfig` (the file `BULKHEAD_CONFIG` names), or a document's (`bulkheadConfigOf`). */
  config: BulkheadConfigNamespace;
  /** Mounts the example controller (`examples: true` in the file). @default false */
  examples?: boolean;
}

/**
 * The service: the YAML file enters through @nestjs/config, and BulkheadModule gets it from
 * there, exactly as a company's app would hand it its own config.
 */
@Module({})
export class AppModule {
  static forRoot(options: AppModuleOptions): DynamicModule {
    const { config } = options;
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, cache: true, load: [config] }),
        BulkheadModule.forRootAsync({
          inject: [config.KEY],
          useFactory: (loaded: BulkheadConfigType) => loaded,
        }),
        ...(options.examples ? [ExampleModule] : []),
      ],
    };
  }
}
