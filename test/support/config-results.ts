import type { BulkheadConfig, ConfigResult } from '../../src/config';

/** The config of a result that must be valid; its problems otherwise, as the test's failure. */
export function configOf(result: ConfigResult): BulkheadConfig {
  if (!result.ok) throw new Error(`expected a valid config, got:\n${result.problems.join('\n')}`);
  return result.config;
}

/** The problems of a result that must be invalid. */
export function problemsOf(result: ConfigResult): string[] {
  if (result.ok) throw new Error('expected problems, got a valid config');
  return result.problems;
}
