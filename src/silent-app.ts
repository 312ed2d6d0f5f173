import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';
import { appOptions, configureApp, createAdapter } from './bootstrap';
import { bulkheadConfigValue, parseConfig } from './config';

/**
 * The service's app from a config document instead of the file, logging nothing: the warm-up's
 * throwaway app (src/warm-up). An empty environment: `PORT` and the service's variables are the
 * service's, not this app's.
 */
export async function silentAppOf(document: Record<string, unknown>): Promise<NestFastifyApplication> {
  const parsed = parseConfig(document, {});
  if (!parsed.ok) throw new Error(`its config: ${parsed.problems.join('; ')}`);
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot({ config: bulkheadConfigValue(parsed.config), examples: false }),
    createAdapter(parsed.config),
    appOptions(false),
  );
  configureApp(app);
  return app;
}
