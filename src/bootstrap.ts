import type { LogLevel } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { BulkheadConfig } from './config';
import { closeConnectionsWhileDraining, Lifecycle } from './lifecycle';

const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];

/** The logger levels up to and including the configured one. */
export function logLevels(config: BulkheadConfig): LogLevel[] {
  return LOG_LEVELS.slice(0, LOG_LEVELS.indexOf(config.server.logLevel) + 1);
}

export function createAdapter(config: BulkheadConfig): FastifyAdapter {
  return new FastifyAdapter({
    bodyLimit: config.server.bodyLimitBytes,
    // Requests that arrive while the server closes still reach our routes and get the
    // envelope (`stopped`), not Fastify's own 503 body.
    return503OnClosing: false,
  });
}

/** What the app needs besides its modules; main.ts and the tests' app builder both call it. */
export function configureApp(app: NestFastifyApplication): void {
  closeConnectionsWhileDraining(app.getHttpAdapter().getInstance(), app.get(Lifecycle));
}
