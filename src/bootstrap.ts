import type { LoggerService, LogLevel, NestApplicationOptions } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { logRecord } from './common';
import {
  answerClientError,
  answerFrameworkError,
  answerProtocolErrors,
  connectionServerOptions,
  limitConnections,
  limitJsonDepth,
} from './common/nest';
import type { BulkheadConfig } from './config';
import {
  createServiceLogger,
  logFormatFrom,
  logLevelsUpTo,
  type PinoLoggerService,
  type ServiceLoggerOptions,
} from './logging';

/** The logger levels up to and including the configured one. */
export function logLevels(config: BulkheadConfig): LogLevel[] {
  return logLevelsUpTo(config.server.logLevel);
}

/**
 * The service's logger: JSON lines on stdout at `server.logLevel` (pretty ones when
 * `LOG_FORMAT=pretty` and pino-pretty is installed). A bad `LOG_FORMAT` is said once, in JSON.
 */
export function serviceLogger(
  config: BulkheadConfig,
  env: NodeJS.ProcessEnv,
  destination?: ServiceLoggerOptions['destination'],
): PinoLoggerService {
  const { format, problem } = logFormatFrom(env);
  const logger = createServiceLogger({ level: config.server.logLevel, format, destination });
  if (problem) logger.warn(logRecord({ msg: problem, event: 'logging' }), 'Bulkhead');
  return logger;
}

/**
 * The Fastify adapter with the service's HTTP limits: body size, how long a request may take to
 * arrive and a connection stay silent (408 past either), how many connections at once.
 */
export function createAdapter(config: BulkheadConfig): FastifyAdapter {
  const connections = connectionServerOptions(config.server);
  const adapter = new FastifyAdapter({
    bodyLimit: config.server.bodyLimitBytes,
    requestTimeout: connections.requestTimeout,
    connectionTimeout: connections.connectionTimeout,
    // Requests that arrive while the server closes still reach our routes and get the
    // envelope (`stopped`), not Fastify's own 503 body.
    return503OnClosing: false,
    frameworkErrors: answerFrameworkError,
    // Requests Node refuses before any route (unparsable, no Host, an unknown Expect) get the
    // envelope too, not Fastify's body or Node's empty one; the Host check moves to a hook.
    clientErrorHandler: answerClientError,
    http: { requireHostHeader: false, ...connections.http },
  });
  answerProtocolErrors(adapter.getInstance());
  limitConnections(adapter.getInstance().server, config.server);
  return adapter;
}

/**
 * Options for `NestFactory.create`. Nest's own body parsers are off: they would also accept
 * form bodies. Fastify's JSON parser stays (with its prototype-poisoning guard), wrapped by
 * {@link configureApp} with a nesting-depth check.
 */
export function appOptions(logger: LogLevel[] | LoggerService | false): NestApplicationOptions {
  return { bodyParser: false, logger };
}

/** What the app needs besides its modules; main.ts and the tests' app builder both call it. */
export function configureApp(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  // Only JSON bodies: anything else is refused as `invalid_request` before a handler runs.
  fastify.removeContentTypeParser('text/plain');
  limitJsonDepth(fastify);
}
