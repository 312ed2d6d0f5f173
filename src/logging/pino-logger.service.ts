import { ConsoleLogger, type LogLevel } from '@nestjs/common';
import type { Logger as Pino } from 'pino';
import { LEVEL_RANK, logLevelsUpTo, lowestLevel, PINO_LEVEL } from './log-levels';

/**
 * Nest's start-up chatter, a line per module initialised and per route mapped (about fifty), is
 * `debug`: at `log` the start-up says only that the service is listening, and where.
 */
const STARTUP_CONTEXTS: ReadonlySet<string> = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

/** A line that looks like a stack trace (`\n    at f (file:1:2)`) rather than a context name. */
const STACK_LIKE = /\n\s+at /;

/**
 * Nest's LoggerService written as JSON lines by pino: every `new Logger('...')` of the app, and
 * Nest's own lines, come out through it. A message that is an object (`{ msg, ...fields }`) gives
 * the line its fields, as with nestjs-pino; a string is the line's `msg`. The context Nest passes
 * is the `context` field.
 *
 * It extends ConsoleLogger only so that Nest's `Logger.isLevelEnabled` asks it: Nest consults a
 * ConsoleLogger's own levels, and counts every level as enabled for any other logger. Nothing of
 * ConsoleLogger's printing is used. No per-request work: no middleware, no child logger per
 * request, no AsyncLocalStorage.
 */
export class PinoLoggerService extends ConsoleLogger {
  /** One pino child per context, made on first use (a handful: Bulkhead, Redis, Nest's own). */
  private readonly byContext = new Map<string, Pino>();
  /** Rank of the least severe level written; above every rank when nothing is. */
  private lowestRank = 0;

  constructor(
    private readonly pino: Pino,
    level: LogLevel,
  ) {
    super({ logLevels: logLevelsUpTo(level) });
    this.applyLevels(logLevelsUpTo(level));
  }

  override isLevelEnabled(level: LogLevel): boolean {
    return LEVEL_RANK[level] >= this.lowestRank;
  }

  override setLogLevels(levels: LogLevel[]): void {
    super.setLogLevels(levels);
    this.applyLevels(levels);
  }

  override log(message: unknown, ...params: unknown[]): void {
    this.write('log', message, params);
  }

  override warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }

  override debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }

  override verbose(message: unknown, ...params: unknown[]): void {
    this.write('verbose', message, params);
  }

  override fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  /** Nest's `error(message, stack?, context?)`: the stack, when there is one, is the `stack` field. */
  override error(message: unknown, ...params: unknown[]): void {
    const context = takeContext(params);
    const stack = typeof params[0] === 'string' ? params[0] : undefined;
    // What is left after the stack (or Nest's `undefined` in its place) are extra values.
    this.emit('error', message, context, stack, params.slice(1));
  }

  private write(level: LogLevel, message: unknown, params: unknown[]): void {
    const context = takeContext(params);
    this.emit(level, message, context, undefined, params);
  }

  private emit(level: LogLevel, message: unknown, context: string | undefined, stack?: string, extra?: unknown[]) {
    if (level === 'log' && context !== undefined && STARTUP_CONTEXTS.has(context)) level = 'debug';
    if (LEVEL_RANK[level] < this.lowestRank) return;
    const target = context === undefined ? this.pino : this.child(context);
    const method = PINO_LEVEL[level];
    let fields: object | undefined;
    let text: string | undefined;
    if (message instanceof Error) fields = { err: message };
    else if (typeof message === 'object' && message !== null) fields = message;
    else text = String(message);
    if (stack !== undefined || (extra !== undefined && extra.length > 0)) {
      fields = { ...fields, ...(stack === undefined ? {} : { stack }), ...(extra?.length ? { params: extra } : {}) };
    }
    if (fields === undefined) target[method](text);
    else if (text === undefined) target[method](fields);
    else target[method](fields, text);
  }

  private child(context: string): Pino {
    let child = this.byContext.get(context);
    if (child === undefined) {
      child = this.pino.child({ context });
      this.byContext.set(context, child);
    }
    return child;
  }

  private applyLevels(levels: readonly LogLevel[]): void {
    const lowest = lowestLevel(levels);
    this.lowestRank = lowest === undefined ? Number.POSITIVE_INFINITY : LEVEL_RANK[lowest];
    const pinoLevel = lowest === undefined ? 'silent' : PINO_LEVEL[lowest];
    // A pino child keeps the level it was made with: each is told, not only the parent.
    this.pino.level = pinoLevel;
    for (const child of this.byContext.values()) child.level = pinoLevel;
  }
}

/**
 * Nest passes the logger's context as the last parameter; a last string that is a stack trace
 * is not one (a context-less `Logger.error(message, stack)`).
 */
function takeContext(params: unknown[]): string | undefined {
  const last = params[params.length - 1];
  if (typeof last !== 'string' || STACK_LIKE.test(last)) return undefined;
  params.pop();
  return last;
}
