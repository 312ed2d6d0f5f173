import { createRequire } from 'node:module';
import type { LogLevel } from '@nestjs/common';
import pino, { type DestinationStream } from 'pino';
import type { LogFormat } from './log-format';
import { PinoLoggerService } from './pino-logger.service';
import { logRecord } from '../common';

export interface ServiceLoggerOptions {
  /** `server.logLevel`: it and every more severe level are written. */
  level: LogLevel;
  /** @default 'json' */
  format?: LogFormat;
  /** Where lines go. @default stdout, see {@link stdout} */
  destination?: DestinationStream;
  /**
   * Loads pino-pretty; throws when it is not installed (the production image has no dev
   * dependencies). For tests. @default require('pino-pretty')
   */
  loadPretty?: () => PrettyFactory;
}

/** pino-pretty's default export, as far as it is used here (its types stay out of the public ones). */
export type PrettyFactory = (options: Record<string, unknown>) => DestinationStream;

/** What every line says besides its own fields: `level` as a name (`info`, not 30), `time` in epoch ms. */
const LINE_OPTIONS: pino.LoggerOptions = {
  formatters: { level: (label) => ({ level: label }) },
};

/**
 * The service's own logger: JSON lines through pino, or, with `format: 'pretty'`, lines for a
 * person through pino-pretty when it is installed. When it is not, JSON with one warning
 * saying so: asking for pretty output must never stop the service.
 */
export function createServiceLogger(options: ServiceLoggerOptions): PinoLoggerService {
  const { level, format = 'json' } = options;
  let stream = options.destination;
  let problem: string | undefined;
  if (format === 'pretty') {
    try {
      const pretty = (options.loadPretty ?? requirePretty)();
      stream = pretty({
        // pino-pretty opens stdout itself; a destination it is given must be a Node stream.
        destination: options.destination ?? 1,
        sync: true,
        // Colours only for a terminal: a file or a pipe gets plain text.
        colorize: options.destination === undefined && process.stdout.isTTY === true,
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'pid,hostname,context',
        messageFormat: '{if context}[{context}] {end}{msg}',
        singleLine: true,
      });
    } catch (error) {
      problem =
        (error as NodeJS.ErrnoException)?.code === 'MODULE_NOT_FOUND'
          ? 'LOG_FORMAT=pretty needs pino-pretty, which is not installed here (a dev dependency); writing JSON'
          : `LOG_FORMAT=pretty: pino-pretty failed to start (${(error as Error)?.name}); writing JSON`;
    }
  }
  stream ??= stdout();
  const logger = new PinoLoggerService(pino(LINE_OPTIONS, stream), level);
  if (problem) logger.warn(logRecord({ msg: problem, event: 'logging' }), 'Bulkhead');
  return logger;
}

/** What stdout may hold back while its reader (a container runtime) falls behind; past it, lines are dropped. */
const STDOUT_BACKLOG_BYTES = 16 * 1024 * 1024;

/**
 * Stdout, written asynchronously: a write in progress gathers the lines that come meanwhile
 * into the next one. Chosen for what happens when stdout's reader (a container runtime's log
 * collector) stalls: written synchronously, the event loop would stop with it, and every call;
 * this way lines wait in a buffer, bounded (past it they are dropped, never memory without
 * end). Cheaper too: 1.5 µs a line against 3.4 µs synchronously, in process (BENCHMARKS.md,
 * "Logging"). What is held back is written out when the process exits (pino flushes on `exit`,
 * which `main.ts`'s shutdown ends with); only a SIGKILL loses it.
 */
function stdout(): DestinationStream {
  return pino.destination({ dest: 1, sync: false, maxLength: STDOUT_BACKLOG_BYTES });
}

function requirePretty(): PrettyFactory {
  return createRequire(__filename)('pino-pretty') as PrettyFactory;
}
