import type { DynamicModule, LoggerService, Type } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { AppModule } from '../../src/app.module';
import { appOptions, configureApp, createAdapter } from '../../src/bootstrap';
import { CLOCK, type Clock, RANDOM, type Random } from '../../src/common';
import { type BulkheadConfig, bulkheadConfigOf, parseConfig } from '../../src/config';
import type { Environment } from '../../src/config/env-substitution';
import { REDIS_TIME, RedisTime } from '../../src/store';

export interface TestApp {
  app: NestFastifyApplication;
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
  const appModule = AppModule.forRoot({ config: bulkheadConfigOf(withDefaults, env), examples: config.examples });
  let builder = Test.createTestingModule({ imports: [appModule, ...(options.imports ?? [])] });
  if (options.clock) builder = builder.overrideProvider(CLOCK).useValue(options.clock);
  if (options.random) builder = builder.overrideProvider(RANDOM).useValue(options.random);
  if (options.redisOnClock && options.clock) {
    builder = builder.overrideProvider(REDIS_TIME).useValue(new RedisTime(options.clock));
  }
  const moduleRef = await builder.compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(
    createAdapter(config),
    appOptions(options.logger ?? false),
  );
  configureApp(app);
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  return { app, config, url, close: () => app.close() };
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
