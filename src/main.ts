import './supported-node';
import './early-tier-up';
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';
import { appOptions, configureApp, createAdapter, serviceLogger } from './bootstrap';
import { silentAppOf } from './silent-app';
import {
  bulkheadConfig,
  type BulkheadConfig,
  bulkheadConfigValue,
  ConfigError,
  configPath,
  egressWarnings,
} from './config';
import { CLOCK, type Clock, logRecord, noop } from './common';
import { installProcessSafetyNet, ProcessShutdown } from './lifecycle';
import { warmUpRequestPath, type WarmUpReport } from './warm-up';

async function main(): Promise<void> {
  const path = configPath();
  const config = configOrExit();
  // Before the app exists: its first requests are then served nearer warm speed.
  const warmed = await warmUp(config);
  // JSON lines on stdout, at server.logLevel: Nest's own, every module's, one per failed call.
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot({ config: bulkheadConfigValue(config), examples: config.examples }),
    createAdapter(config),
    appOptions(serviceLogger(config, process.env)),
  );
  configureApp(app);
  const logger = new Logger('Bulkhead');
  // Upstreams the egress policy will refuse: said once, before the first request finds out.
  for (const warning of egressWarnings(config)) logger.warn(logRecord({ msg: warning, event: 'config' }));
  if (warmed instanceof Error) logger.warn(logRecord({ msg: `warm-up failed: ${warmed.message}`, event: 'warm-up' }));
  else if (warmed.calls + warmed.failed > 0) {
    const msg = `warmed the request path: ${warmed.calls} calls (${warmed.failed} failed) in ${Math.round(warmed.elapsedMs)} ms`;
    logger.log(logRecord({ msg, event: 'warm-up' }));
  }
  // From here on, signals and an error nobody handled end the process the same way, once.
  const shutdown = new ProcessShutdown(app, { drainMs: config.server.shutdownDrainMs, clock: app.get<Clock>(CLOCK) });
  installProcessSafetyNet(app, { shutdown });
  await listenOrExplain(app, config, path);
  const stop = (signal: NodeJS.Signals) => shutdown.stop({ signal });
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  // Last: whoever waits for this line (a supervisor, a test) may signal at once, and a signal
  // before the handlers above would end the process without its drain.
  logger.log(logRecord({ msg: `listening on ${await app.getUrl()} with ${path}`, event: 'listening' }));
}

/**
 * The request path run hot in a throwaway app of the same code (src/warm-up), within
 * `server.warmUpMs`; what went wrong instead, which only costs the service its head start.
 */
async function warmUp(config: BulkheadConfig): Promise<WarmUpReport | Error> {
  try {
    return await warmUpRequestPath({
      budgetMs: config.server.warmUpMs,
      build: silentAppOf,
      now: () => performance.now(),
    });
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/** Listens; a port held by another process is said plainly, naming where the port came from. */
async function listenOrExplain(app: NestFastifyApplication, config: BulkheadConfig, path: string): Promise<void> {
  const { port, host } = config.server;
  try {
    await app.listen(port, host);
  } catch (error) {
    if ((error as NodeJS.ErrnoException)?.code !== 'EADDRINUSE') throw error;
    await app.close().catch(noop);
    const from = process.env.PORT ? 'PORT' : `server.port in ${path}`;
    throw new Error(`port ${port} on ${host} is in use (${from}): stop what holds it, or choose another port`);
  }
}

/**
 * The config file, validated before Nest boots: a bad file exits 1 with one line per problem.
 * The server settings (port, body limit, log level) are needed before the app exists; the
 * app itself reads the file again through @nestjs/config's namespace, the same loader.
 */
function configOrExit(): BulkheadConfig {
  try {
    return bulkheadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`bulkhead: invalid config ${error.source}\n${error.problems.join('\n')}\n`);
    process.exit(1);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bulkhead: failed to start: ${(error as Error).message}\n`);
  process.exit(1);
});
