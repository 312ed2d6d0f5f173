/** How the service writes its lines: JSON (one object a line, for machines) or pretty (for a person at a terminal). */
export type LogFormat = 'json' | 'pretty';

/**
 * `LOG_FORMAT` of the environment: `pretty` when a person asks for it, JSON otherwise. Any other
 * value is JSON too, with a problem to log: a typo must not stop the service.
 */
export function logFormatFrom(env: NodeJS.ProcessEnv): { format: LogFormat; problem?: string } {
  const value = env.LOG_FORMAT;
  if (value === undefined || value === '' || value === 'json') return { format: 'json' };
  if (value === 'pretty') return { format: 'pretty' };
  return { format: 'json', problem: `LOG_FORMAT must be json or pretty; writing JSON` };
}
