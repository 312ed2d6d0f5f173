import type { DynamicModule, INestApplication, LoggerService, NestApplicationOptions, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { AppModule } from '../../src/app.module';
import { appOptions, configureApp, createAdapter } from '../../src/bootstrap';
import { CLOCK, type Clock, RANDOM, type Random } from '../../src/common';
import { limitJsonDepth, type PlatformName } from '../../src/common/nest';
import { type BulkheadConfig, bulkheadConfigOf, parseConfig } from '../../src/config';
import type { Environment } from '../../src/config/env-substitution';
import { REDIS_TIME, RedisTime } from '../../src/store';

/** The HTTP platforms a host app may run Bulkhead on; suites a host relies on run on each. */
export const PLATFORMS: readonly PlatformName[] = ['fastify', 'express'];

export interface TestApp {
  /** A `NestFastifyApplication` on Fastify (the default), a `NestExpressApplication` on Express. */
  app: NestFastifyApplication;
  platform: PlatformName;
  config: BulkheadConfig;
  /** Base URL on loopback, e.g. http://127.0.0.1:41234 */
  url: string;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** A FakeClock for virtual time; the system clock otherwise. */
  clock?: Clock;
  /**
   * With `store: { kind: redis }`: the Redis scripts take their time from `clock` instead of
   * Redis `TIME`, so refills, lapses and retention run in virtual time there too.
   */
  redisOnClock?: boolean;
  /** A seeded random source (`seededRandom`) for repeatable jitter; Math.random otherwise. */
  random?: Random;
  /** A company's own modules (controllers with @Bulkhead, providers with @Tool). */
  imports?: Array<Type | DynamicModule>;
  /** Nest's logger; silent unless given. */
  logger?: LoggerService | false;
  /**
   * The environment the document is validated in (`${VAR}`, `BULKHEAD_ALLOW_CHAOS`); an empty
   * one unless given. BulkheadModule validates its options again in `process.env`.
   */
  env?: Environment;
  /**
   * The HTTP platform. `fastify` (the default) is the service as main.ts builds it; `express` is
   * the same modules in an Express app as a host builds it (Nest's body parser, `limitJsonDepth`).
   */
  platform?: PlatformName;
}

/**
 * The service as main.ts builds it, from a config document (validated like the file would
 * be), listening on a free loopback port. Every test closes its app.
 */
export async function createTestApp(document: Record<string, unknown>, options: TestAppOptions = {}): Promise<TestApp> {
  const withDefaults = withTestDefaults(document);
  const env = options.env ?? {};
  const parsed = parseConfig(withDefaults, env);
  if (!parsed.ok) throw new Error(`invalid test config:\n${parsed.problems.join('\n')}`);
  const config = parsed.config;
  const platform = options.platform ?? 'fastify';
  const appModule = AppModule.forRoot({
    config: bulkheadConfigOf(withDefaults, env),
    examples: config.examples,
  });
  let builder = Test.createTestingModule({ imports: [appModule, ...(options.imports ?? [])] });
  if (options.clock) builder = builder.overrideProvider(CLOCK).useValue(options.clock);
  if (options.random) builder = builder.overrideProvider(RANDOM).useValue(options.random);
  if (options.redisOnClock && options.clock) {
    builder = builder.overrideProvider(REDIS_TIME).useValue(new RedisTime(options.clock));
  }
  const moduleRef = await builder.compile();
  const logger = options.logger ?? false;
  let app: NestFastifyApplication;
  if (platform === 'express') {
    app = moduleRef.createNestApplication(new ExpressAdapter(), { logger }) as unknown as NestFastifyApplication;
    limitJsonDepth(app);
  } else {
    app = moduleRef.createNestApplication<NestFastifyApplication>(createAdapter(config), appOptions(logger));
    configureApp(app);
  }
  const url = await listenOnLoopback(app);
  return { app, platform, config, url, close: () => app.close() };
}

/**
 * A company's app on a platform, as its own main.ts would make it (`NestFactory.create` with the
 * platform's adapter and Nest's defaults otherwise), not yet listening.
 */
export function createHostApp(
  module: Type | DynamicModule,
  platform: PlatformName,
  options: NestApplicationOptions = {},
): Promise<INestApplication> {
  const adapter = platform === 'express' ? new ExpressAdapter() : new FastifyAdapter();
  return NestFactory.create(module, adapter, { logger: false, abortOnError: false, ...options });
}

/** Listens on a free loopback port; the app's base URL. */
export async function listenOnLoopback(app: INestApplication): Promise<string> {
  await app.listen(0, '127.0.0.1');
  return (await app.getUrl()).replace('[::1]', '127.0.0.1');
}

/**
 * What tests assume unless their document says otherwise: callers without a key are allowed
 * (tenant `anonymous`), and the loopback upstreams tests start are allowed destinations.
 */
function withTestDefaults(document: Record<string, unknown>): Record<string, unknown> {
  const containment = (document.containment ?? {}) as Record<string, unknown>;
  return {
    ...document,
    auth: { allowAnonymous: true, ...(document.auth as Record<string, unknown> | undefined) },
    containment: {
      ...containment,
      egress: containment.egress ?? { allowHosts: ['*'], allowPrivateCidrs: ['127.0.0.0/8', '::1/128'] },
    },
  };
}
