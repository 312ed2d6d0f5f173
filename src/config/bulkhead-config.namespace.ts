import { type ConfigType, registerAs } from '@nestjs/config';
import { configOrThrow, configPath, type ConfigResult, loadConfigFile, parseConfig } from './config.loader';
import type { BulkheadConfig } from './config.schema';
import type { Environment } from './env-substitution';

/** The @nestjs/config namespace of the YAML file: `configService.get('bulkhead')`. */
export const BULKHEAD_CONFIG_NAMESPACE = 'bulkhead';

/**
 * The config file as a @nestjs/config namespace, for `ConfigModule.forRoot({ load: [bulkheadConfig] })`.
 * Its factory reads the file `BULKHEAD_CONFIG` names, substitutes `${VAR}` and validates it:
 * that all happens here, because the package's own `validate` only ever sees the environment.
 * A file with problems throws a `ConfigError` listing every one. Inject the typed result with
 * `@Inject(bulkheadConfig.KEY) config: BulkheadConfigType`.
 */
export const bulkheadConfig = registerAs(BULKHEAD_CONFIG_NAMESPACE, (): BulkheadConfig => {
  const path = configPath();
  return configOrThrow(loadConfigFile(path), path);
});

export type BulkheadConfigNamespace = typeof bulkheadConfig;
export type BulkheadConfigType = ConfigType<typeof bulkheadConfig>;

/**
 * The same namespace from a document instead of the file (tests, or an app that builds its
 * config in code); validated the same way.
 */
export function bulkheadConfigOf(document: unknown, env: Environment = process.env): BulkheadConfigNamespace {
  const result: ConfigResult = parseConfig(document, env);
  return registerAs(BULKHEAD_CONFIG_NAMESPACE, (): BulkheadConfig => configOrThrow(result, 'document'));
}

/**
 * The same namespace over a config already read and validated: main.ts reads the file once
 * before Nest starts (a bad file exits 1 with its problems), and hands that result on instead of
 * reading and validating the file a second time.
 */
export function bulkheadConfigValue(config: BulkheadConfig): BulkheadConfigNamespace {
  return registerAs(BULKHEAD_CONFIG_NAMESPACE, (): BulkheadConfig => config);
}
