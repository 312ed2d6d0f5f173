import type { LogLevel, LoggerService } from '@nestjs/common';
import type { NestApplicationOptions } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { answerClientError, answerFrameworkError, answerProtocolErrors } from './common/nest';
import type { BulkheadConfig } from './config';

const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];

/** The logger levels up to and including the configured one. */
export function logLevels(config: BulkheadConfig): LogLevel[] {
  return LOG_LEVELS.slice(0, LOG_LEVELS.indexOf(config.server.logLevel) + 1);
}

export function createAdapter(config: BulkheadConfig): FastifyAdapter {
  const adapter = new FastifyAdapter({
    bodyLimit: config.server.bodyLimitBytes,
    // Requests that arrive while the server closes still reach our routes and get the
    // envelope (`stopped`), not Fastify's own 503 body.
    return503OnClosing: false,
    frameworkErrors: answerFrameworkError,
    // Requests Node refuses before any route (unparsable, no Host, an unknown Expect) get the
    // envelope too, not Fastify's body or Node's empty one; the Host check moves to a hook.
    clientErrorHandler: answerClientError,
    http: { requireHostHeader: false },
  });
  answerProtocolErrors(adapter.getInstance());
  return adapter;
}

/**
 * Options for `NestFactory.create`. Nest's own body parsers are off: they would also accept
 * form bodies. Fastify's JSON parser stays (with its prototype-poisoning guard).
 */
export function appOptions(logger: LogLevel[] | LoggerService | false): NestApplicationOptions {
  return { bodyParser: false, logger };
}

/** What the app needs besides its modules; main.ts and the tests' app builder both call it. */
export function configureApp(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  // Only JSON bodies: anything else is refused as `invalid_request` before a handler runs.
  fastify.removeContentTypeParser('text/plain');
}
