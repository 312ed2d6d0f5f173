/**
 * The apps the overhead benchmark measures next to the service, each a process of its own on
 * loopback (`node -r swc-register bench/support/bare-app.ts --bare|--app`):
 *
 *   --bare  a bare NestJS 12 + Fastify app with Nest's defaults and nothing of Bulkhead:
 *           `POST /bare` answers `{"ok":true}`. What a plain company route costs.
 *   --app   the real service as built (dist/app.module.js on the config in BENCH_APP_CONFIG,
 *           or in the JSON file BENCH_APP_CONFIG_FILE names when it is too large for the
 *           environment, set up as dist/main.js sets it up), plus two company routes, each in a module of
 *           its own, both answering `{"ok":true}` behind the service's global guard (API key):
 *             POST /bench/policies     `@Bulkhead(POLICY_LANE)` + `@CircuitBreaker(POLICY_BREAKER)`
 *             POST /bench/interceptor  one no-op interceptor, nothing else
 *             POST /bench/plain        nothing: the same route without either
 *           On Express when BENCH_APP_PLATFORM=express: Nest's ExpressAdapter and body parser,
 *           `limitJsonDepth(app)`, the LLM and MCP routes left out (Fastify's only).
 *           The app serves the tool routes too. Everything of Bulkhead is loaded from dist/,
 *           never from src/: the decorators must attach the very RoutePolicyInterceptor class
 *           the app's own modules provide, and the code measured is the code that ships.
 *
 * Prints `listening on http://127.0.0.1:<port>` once it serves; over IPC it answers with its
 * CPU time so far and, on request, a CPU profile of a window (node:inspector); it ends on
 * SIGTERM or when its parent goes.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import type { Profiler } from 'node:inspector';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import {
  type CallHandler,
  Controller,
  type DynamicModule,
  type ExecutionContext,
  HttpCode,
  Injectable,
  Module,
  type NestInterceptor,
  Post,
  UseInterceptors,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { PlatformName } from '../../src/common/nest';
import type { Observable } from 'rxjs';
import { built } from './built';
import { type Child, exitWithParent, onCleanup, startChild, stopChild, SWC_REGISTER, waitForLine } from './processes';

/** The lane and the breaker of `POST /bench/policies`: the config given to `--app` must have the lane. */
export const POLICY_LANE = 'routes';
export const POLICY_BREAKER = 'routes-api';

export const BARE_PATH = '/bare';
export const POLICIES_PATH = '/bench/policies';
export const INTERCEPTOR_PATH = '/bench/interceptor';
export const PLAIN_PATH = '/bench/plain';

const LISTENING = /listening on http:\/\/[^\s:]+:(\d+)/;
const START_TIMEOUT_MS = 20_000;
/** A config larger than this goes through a file: Linux holds one environment string to 128 KiB. */
const CONFIG_IN_ENVIRONMENT_MAX_CHARS = 64 * 1024;
const PROFILE_SAMPLING_US = 500;

export type AppMode = 'bare' | 'app';

export interface BenchApp {
  /** `http://127.0.0.1:<port>` */
  readonly base: string;
  readonly child: Child;
  url(path: string): string;
  /** The app process's CPU time (user + system) so far, in µs. */
  cpuUs(): Promise<number>;
  /** Starts sampling the app's CPU (V8's profiler, every 500 µs). */
  startProfile(): Promise<void>;
  /** Stops sampling; the profile of the window since `startProfile()`. */
  stopProfile(): Promise<Profiler.Profile>;
  /** SIGTERM (the app closes), SIGKILL if it does not end. */
  stop(): Promise<void>;
}

type Message = { type: 'cpu' } | { type: 'profile-start' } | { type: 'profile-stop' };
type Request = Message & { id: number };
interface Reply {
  id: number;
  cpuUs?: number;
  profile?: Profiler.Profile;
  error?: string;
}

export interface BenchAppOptions {
  /** The process's name in messages. @default 'bare app' or 'app' */
  name?: string;
  /** @default 20000 */
  startTimeoutMs?: number;
  /** The app's HTTP platform (`app` only). @default 'fastify' */
  platform?: PlatformName;
}

/**
 * Starts an app process: `bare`, or `app` on `config` (the service's config document, as an
 * object; `server.host`/`port` are ignored, it listens on 127.0.0.1 and a port of its own).
 * Resolves once it serves. Needs `npm run build` first for `app`.
 */
export async function startBenchApp(mode: 'bare'): Promise<BenchApp>;
export async function startBenchApp(mode: 'app', config: object, options?: BenchAppOptions): Promise<BenchApp>;
export async function startBenchApp(mode: AppMode, config?: object, options: BenchAppOptions = {}): Promise<BenchApp> {
  const { name = mode === 'bare' ? 'bare app' : 'app', startTimeoutMs = START_TIMEOUT_MS } = options;
  const env: Record<string, string> = config ? configEnvironment(JSON.stringify(config)) : {};
  if (options.platform) env.BENCH_APP_PLATFORM = options.platform;
  const child = startChild(name, ['-r', SWC_REGISTER, __filename, `--${mode}`], {
    env,
    ipc: true,
  });
  const port = Number((await waitForLine(child, LISTENING, startTimeoutMs))[1]);
  const base = `http://127.0.0.1:${port}`;

  let nextId = 0;
  const pending = new Map<number, (reply: Reply) => void>();
  child.process.on('message', (reply: Reply) => pending.get(reply.id)?.(reply));
  void child.exited.then(() => {
    for (const answer of pending.values()) answer({ id: -1, error: `${child.name} ended` });
  });
  const ask = (message: Message) =>
    new Promise<Reply>((done, fail) => {
      const id = ++nextId;
      pending.set(id, (reply) => {
        pending.delete(id);
        if (reply.error) fail(new Error(`${child.name}: ${reply.error}`));
        else done(reply);
      });
      child.process.send({ ...message, id });
    });
  return {
    base,
    child,
    url: (path) => `${base}${path}`,
    cpuUs: async () => (await ask({ type: 'cpu' })).cpuUs!,
    startProfile: async () => void (await ask({ type: 'profile-start' })),
    stopProfile: async () => (await ask({ type: 'profile-stop' })).profile!,
    stop: () => stopChild(child),
  };
}

/** BENCH_APP_CONFIG, or BENCH_APP_CONFIG_FILE naming a temporary file for a config too large for it. */
function configEnvironment(text: string): Record<string, string> {
  if (text.length <= CONFIG_IN_ENVIRONMENT_MAX_CHARS) return { BENCH_APP_CONFIG: text };
  const dir = mkdtempSync(resolve(tmpdir(), 'bulkhead-bench-app-'));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  const file = resolve(dir, 'config.json');
  writeFileSync(file, text);
  return { BENCH_APP_CONFIG_FILE: file };
}

// ---------------------------------------------------------------------------------------------
// In the app process

@Controller()
class BareController {
  @Post('bare')
  @HttpCode(200)
  answer() {
    return { ok: true };
  }
}

@Module({ controllers: [BareController] })
class BareModule {}

/** Nest's defaults: what a company's own NestJS + Fastify service starts from. */
function createBareApp(): Promise<NestFastifyApplication> {
  return NestFactory.create<NestFastifyApplication>(BareModule, new FastifyAdapter(), { logger: ['error', 'warn'] });
}

@Injectable()
class NoopInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle();
  }
}

@Controller('bench')
class InterceptorRouteController {
  @Post('interceptor')
  @HttpCode(200)
  @UseInterceptors(NoopInterceptor)
  handle() {
    return { ok: true };
  }

  @Post('plain')
  @HttpCode(200)
  plain() {
    return { ok: true };
  }
}

@Module({ controllers: [InterceptorRouteController] })
class InterceptorRouteModule {}

@Module({})
class BenchAppModule {}

/** The built service's modules, typed by their sources. */
interface Dist {
  appModule: typeof import('../../src/app.module');
  bootstrap: typeof import('../../src/bootstrap');
  config: typeof import('../../src/config');
  routePolicies: typeof import('../../src/route-policies');
  commonNest: typeof import('../../src/common/nest');
}

function loadDist(): Dist {
  return {
    appModule: built<Dist['appModule']>('app.module'),
    bootstrap: built<Dist['bootstrap']>('bootstrap'),
    config: built<Dist['config']>('config'),
    routePolicies: built<Dist['routePolicies']>('route-policies'),
    commonNest: built<Dist['commonNest']>('common/nest'),
  };
}

/** The company route under `@Bulkhead` + `@CircuitBreaker`, decorated by the built decorators. */
function policyRouteModule({ Bulkhead, CircuitBreaker }: Dist['routePolicies']) {
  @Controller('bench')
  class PolicyRouteController {
    @Post('policies')
    @HttpCode(200)
    @Bulkhead(POLICY_LANE)
    @CircuitBreaker(POLICY_BREAKER)
    handle() {
      return { ok: true };
    }
  }

  @Module({ controllers: [PolicyRouteController] })
  class PolicyRouteModule {}
  return PolicyRouteModule;
}

/** The service as dist/main.js builds it, with the two company routes beside its own. */
async function createServiceApp(): Promise<NestFastifyApplication> {
  const dist = loadDist();
  const file = process.env.BENCH_APP_CONFIG_FILE;
  const document = JSON.parse(file ? readFileSync(file, 'utf8') : (process.env.BENCH_APP_CONFIG ?? 'null')) as unknown;
  const loaded = dist.config.parseConfig(document);
  if (!loaded.ok) throw new Error(`invalid config:\n${loaded.problems.join('\n')}`);
  const { config } = loaded;
  const express = process.env.BENCH_APP_PLATFORM === 'express';
  const root: DynamicModule = {
    module: BenchAppModule,
    imports: [
      dist.appModule.AppModule.forRoot({ config: dist.config.bulkheadConfigOf(document) }),
      policyRouteModule(dist.routePolicies),
      InterceptorRouteModule,
    ],
  };
  if (express) {
    // A company's Express app: Nest's defaults, with the depth limit the guide asks for.
    const app = await NestFactory.create(root, new ExpressAdapter(), { logger: dist.bootstrap.logLevels(config) });
    dist.commonNest.limitJsonDepth(app);
    return app as unknown as NestFastifyApplication;
  }
  const app = await NestFactory.create<NestFastifyApplication>(
    root,
    dist.bootstrap.createAdapter(config),
    dist.bootstrap.appOptions(dist.bootstrap.logLevels(config)),
  );
  dist.bootstrap.configureApp(app);
  return app;
}

function answerParent(): void {
  let session: Session | undefined;
  const handle = async (message: Message): Promise<Omit<Reply, 'id'>> => {
    switch (message.type) {
      case 'cpu': {
        const { user, system } = process.cpuUsage();
        return { cpuUs: user + system };
      }
      case 'profile-start':
        if (session) throw new Error('a profile is already running');
        session = new Session();
        session.connect();
        await session.post('Profiler.enable');
        await session.post('Profiler.setSamplingInterval', { interval: PROFILE_SAMPLING_US });
        await session.post('Profiler.start');
        return {};
      case 'profile-stop': {
        if (!session) throw new Error('no profile is running');
        const { profile } = await session.post('Profiler.stop');
        session.disconnect();
        session = undefined;
        return { profile };
      }
    }
  };
  process.on('message', (request: Request) => {
    handle(request).then(
      (reply) => process.send!({ ...reply, id: request.id }),
      (error: unknown) => process.send!({ id: request.id, error: (error as Error).message }),
    );
  });
  process.on('disconnect', () => process.exit(0));
}

async function serve(mode: AppMode): Promise<void> {
  const app = mode === 'bare' ? await createBareApp() : await createServiceApp();
  await app.listen(0, '127.0.0.1');
  process.once('SIGTERM', () => {
    // Leave anyway if closing hangs.
    setTimeout(() => process.exit(1), 5_000).unref();
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
  answerParent();
  exitWithParent();
  process.stdout.write(`listening on ${await app.getUrl()}\n`);
}

if (require.main === module) {
  const mode = process.argv.includes('--app') ? 'app' : process.argv.includes('--bare') ? 'bare' : undefined;
  if (!mode) {
    process.stderr.write('usage: bare-app.ts --bare | --app (config in BENCH_APP_CONFIG)\n');
    process.exit(2);
  }
  serve(mode).catch((error: unknown) => {
    process.stderr.write(`bench app failed to start: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
}
