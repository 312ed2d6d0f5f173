import type { LogLevel } from '@nestjs/common';

/** Nest's levels, most severe first: a configured level enables itself and those before it. */
const NEST_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];

/** The levels enabled by `level` (`server.logLevel`): it and every more severe one. */
export function logLevelsUpTo(level: LogLevel): LogLevel[] {
  return NEST_LEVELS.slice(0, NEST_LEVELS.indexOf(level) + 1);
}

/** Nest's level names as pino's: `log` is `info`, `verbose` is `trace`. */
export const PINO_LEVEL = {
  fatal: 'fatal',
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
  verbose: 'trace',
} as const satisfies Record<LogLevel, string>;

export type PinoLevel = (typeof PINO_LEVEL)[LogLevel];

/** Higher is more severe; a level is written when its rank is at least the lowest enabled one's. */
export const LEVEL_RANK: Readonly<Record<LogLevel, number>> = {
  verbose: 0,
  debug: 1,
  log: 2,
  warn: 3,
  error: 4,
  fatal: 5,
};

/** The least severe of `levels` (the one that decides what is written), or undefined for none. */
export function lowestLevel(levels: readonly LogLevel[]): LogLevel | undefined {
  let lowest: LogLevel | undefined;
  for (const level of levels) if (lowest === undefined || LEVEL_RANK[level] < LEVEL_RANK[lowest]) lowest = level;
  return lowest;
}
