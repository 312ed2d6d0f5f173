import {
  BadGatewayException,
  Body,
  Controller,
  Get,
  HttpCode,
  Inject,
  Injectable,
  Module,
  Post,
  type INestApplication,
} from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { APP_FILTER } from '@nestjs/core';
import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
// What a company's app imports: the package's public entry, and nothing deeper.
import {
  Bulkhead,
  BulkheadModule,
  CallSignal,
  type Caller,
  CircuitBreaker,
  CircuitBreakerModule,
  EnvelopeExceptionFilter,
  installProcessSafetyNet,
  LanesModule,
  LaneRegistry,
  limitJsonDepth,
  MemoryContainmentStore,
  ResilienceError,
  RoutePoliciesModule,
  TenantHttpClient,
  TenantResolver,
  WithoutTenant,
} from '../../src/index';
import { createHostApp, listenOnLoopback as listen, PLATFORMS } from '../support/create-app';
import { type Deferred, deferred } from '../support/deferred';
import { expectEnvelope } from '../support/envelope';
import { eventually } from '../support/eventually';
import { send } from '../support/http-client';
import { parsePromText, sampleValue } from '../support/prom-text';
import { json, Upstream } from '../support/upstream';

/** The company's own sign-in: its tokens and who they belong to. */
@Injectable()
class HostTokens {
  private readonly tenants = new Map([
    ['token-acme', { tenant: 'acme', known: true }],
    ['token-guest', { tenant: 'guest', known: false }],
  ]);

  find(token: string | undefined): Caller | undefined {
    return token === undefined ? undefined : this.tenants.get(token);
  }
}

@Module({ providers: [HostTokens], exports: [HostTokens] })
class HostAuthModule {}

/** The company's identity in place of Bulkhead's API keys. */
@Injectable()
class HostTenantResolver extends TenantResolver {
  constructor(@Inject(HostTokens) private readonly tokens: HostTokens) {
    super();
  }

  // Only the headers, which a FastifyRequest and an Express Request both carry: one resolver for both.
  resolve(request: { headers: IncomingHttpHeaders }): Caller {
    const header = request.headers['x-host-token'];
    const caller = this.tokens.find(typeof header === 'string' ? header : undefined);
    if (!caller) throw new ResilienceError('unauthorized', 'sign in first');
    return caller;
  }
}

/** The company's own containment store: Bulkhead's memory one, with the tenants it was asked about. */
class RecordingContainmentStore extends MemoryContainmentStore {
  readonly asked: string[] = [];

  override read(tenant: string) {
    this.asked.push(tenant);
    return super.read(tenant);
  }
}

/** The store the next app gets; a new one for each test. */
let containmentStore = new RecordingContainmentStore();

/** Where the report renderer is; set once the upstream has started. */
let renderUrl = '';

@Controller('reports')
@Bulkhead('reports')
class ReportsController {
  constructor(@Inject(TenantHttpClient) private readonly http: TenantHttpClient) {}

  @Post('render')
  @HttpCode(200)
  @CircuitBreaker('render-api')
  async render(@Body() body: unknown, @CallSignal() signal: AbortSignal): Promise<unknown> {
    const response = await this.http.request(renderUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal,
    });
    if (response.statusCode >= 500) throw new BadGatewayException('the renderer failed');
    return JSON.parse(response.body.toString('utf8')) as unknown;
  }
}

@Controller('status')
@WithoutTenant()
class StatusController {
  @Get()
  status(): { ok: true } {
    return { ok: true };
  }
}

/** The company's app: its own config, auth and controllers, with Bulkhead imported. */
@Module({
  imports: [
    ConfigModule.forRoot({
      ignoreEnvFile: true,
      load: [() => ({ reports: { concurrency: 1, queueCapacity: 1 } })],
    }),
    BulkheadModule.forRootAsync({
      imports: [ConfigModule, HostAuthModule],
      inject: [ConfigService],
      useFactory: (config: ConfigService) => ({
        lanes: { reports: config.getOrThrow('reports') },
        breakers: { 'render-api': { volumeThreshold: 2, errorThresholdPercentage: 50, resetTimeoutMs: 60_000 } },
        containment: { egress: { allowHosts: ['127.0.0.1'], allowPrivateCidrs: ['127.0.0.0/8'] } },
        stores: { containment: containmentStore },
      }),
      tenantResolver: HostTenantResolver,
      routes: { tools: false, events: false, admin: false },
    }),
  ],
  controllers: [ReportsController, StatusController],
})
class HostAppModule {}

/** Jest's own listeners, counted before any app is built. */
const REJECTION_LISTENERS_BEFORE_ANY_APP = process.listenerCount('unhandledRejection');

describe.each(PLATFORMS)('a company app on %s that imports the public entry', (platform) => {
  let upstream: Upstream;
  let app: INestApplication;
  let base: string;
  let held: Deferred<void>[];

  const render = (token: string, body: unknown = { page: 1 }) =>
    send('POST', `${base}/reports/render`, { json: body, headers: { 'x-host-token': token } });
  const metrics = async () => parsePromText((await send('GET', `${base}/metrics`)).body as string);

  beforeEach(async () => {
    held = [];
    upstream = await Upstream.start(json(200, { rendered: true }));
    renderUrl = upstream.url('/render');
    containmentStore = new RecordingContainmentStore();
    app = await createHostApp(HostAppModule, platform);
    base = await listen(app);
  });

  afterEach(async () => {
    for (const gate of held) gate.resolve();
    await app.close();
    await upstream.close();
  });

  /** Holds the renderer's answers until the test releases them. */
  function holdRenderer(): void {
    upstream.use(async (_request, response) => {
      const gate = deferred<void>();
      held.push(gate);
      await gate.promise;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"rendered":true}');
    });
  }

  it('runs a decorated route in its lane: one at a time, one waiting, the next refused with queue_full', async () => {
    holdRenderer();
    const first = render('token-acme');
    await eventually(() => expect(upstream.inFlight).toBe(1));
    const second = render('token-acme');
    await eventually(async () =>
      expect(sampleValue(await metrics(), 'bulkhead_lane_waiting', { lane: 'reports' })).toBe(1),
    );

    const third = await render('token-acme');

    expectEnvelope(third, 503, 'queue_full');
    expect(third.headers['retry-after']).toBeDefined();
    held.shift()!.resolve();
    await eventually(() => expect(held).toHaveLength(1));
    held.shift()!.resolve();
    expect((await first).body).toEqual({ rendered: true });
    expect((await second).body).toEqual({ rendered: true });
    expect(app.get(LaneRegistry).get('reports')!.snapshot().peakActive).toBe(1);
    expect(upstream.peakInFlight).toBe(1);
  });

  it("sends a tenant the host's auth vouches for through the normal pool, and any other through the isolated one", async () => {
    expect((await render('token-acme')).status).toBe(200);
    expect((await render('token-guest')).status).toBe(200);

    const prom = await metrics();
    expect(sampleValue(prom, 'bulkhead_http_pool_peak', { pool: 'normal' })).toBe(1);
    expect(sampleValue(prom, 'bulkhead_http_pool_peak', { pool: 'isolated' })).toBe(1);
    expect(upstream.requests).toHaveLength(2);
  });

  it("routes by the app's own containment store: a tenant it holds contained goes to the isolated pool", async () => {
    containmentStore.write('acme', { state: 'active', posture: 'degraded', reason: 'under review' }, Date.now());

    expect((await render('token-acme')).status).toBe(200);

    expect(containmentStore.asked).toEqual(['acme']);
    const prom = await metrics();
    expect(sampleValue(prom, 'bulkhead_http_pool_peak', { pool: 'isolated' })).toBe(1);
    expect(sampleValue(prom, 'bulkhead_http_pool_peak', { pool: 'normal' })).toBe(0);
  });

  it("refuses a caller the host's auth does not know with 401 in the error envelope, before any request leaves", async () => {
    const response = await render('token-stolen');

    expectEnvelope(response, 401, 'unauthorized');
    expect(upstream.requests).toHaveLength(0);
  });

  it('opens the breaker once the dependency keeps failing, and then refuses without calling it', async () => {
    upstream.use(json(503, { error: 'down' }));
    expect((await render('token-acme')).status).toBe(502);
    expect((await render('token-acme')).status).toBe(502);

    const refused = await render('token-acme');

    expectEnvelope(refused, 503, 'circuit_open');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(upstream.requests).toHaveLength(2);
    expect(sampleValue(await metrics(), 'bulkhead_circuit_state', { breaker: 'render-api' })).toBe(2);
    const circuits = await send('GET', `${base}/v1/circuits`, { headers: { 'x-host-token': 'token-acme' } });
    expect(circuits.body.circuits['render-api'].state).toBe('open');
  });

  it('leaves the process policy to the host until it installs the safety net, which then counts into its metrics', async () => {
    // The modules alone listen for nothing at process level: Node's default, or the host's own, holds.
    expect(process.listenerCount('unhandledRejection')).toBe(REJECTION_LISTENERS_BEFORE_ANY_APP);
    expect(sampleValue(await metrics(), 'bulkhead_unexpected_errors_total', { where: 'unhandled_rejection' })).toBe(0);

    const events = new EventEmitter();
    const remove = installProcessSafetyNet(app, { process: events as unknown as NodeJS.Process });
    events.emit('unhandledRejection', new Error('a bug'), Promise.resolve());
    remove();

    expect(sampleValue(await metrics(), 'bulkhead_unexpected_errors_total', { where: 'unhandled_rejection' })).toBe(1);
    expect(events.listenerCount('unhandledRejection')).toBe(0);
  });

  it('mounts the routes it was asked for and leaves the others out', async () => {
    expect((await send('GET', `${base}/v1/lanes`, { headers: { 'x-host-token': 'token-acme' } })).status).toBe(200);
    expect((await send('GET', `${base}/health/ready`)).status).toBe(200);
    expect((await send('GET', `${base}/status`)).status).toBe(200);
    for (const [method, path] of [
      ['POST', '/v1/tools/echo/invoke'],
      ['GET', '/v1/events'],
      ['GET', '/v1/admin/budgets/acme'],
    ]) {
      const response = await send(method, `${base}${path}`, { json: {}, headers: { 'x-host-token': 'token-acme' } });
      expect(response.status).toBe(404);
    }
  });
});

describe.each(PLATFORMS)('a company app on %s that puts the JSON depth limit on its app', (platform) => {
  it('refuses a body nested past 64 levels before any handler runs', async () => {
    const app = await createHostApp(FeaturesAppModule, platform);
    limitJsonDepth(app);
    const base = await listen(app);
    try {
      const deep = `${'['.repeat(100)}${']'.repeat(100)}`;
      const shallow = `${'['.repeat(10)}${']'.repeat(10)}`;
      const headers = { 'content-type': 'application/json' };

      const refused = await send('POST', `${base}/features/flaky`, { raw: deep, headers });
      const handled = await send('POST', `${base}/features/flaky`, { raw: shallow, headers });

      expectEnvelope(refused, 400, 'invalid_request');
      // A body within the limit reaches the handler (which fails as its dependency does).
      expect(handled.status).toBe(502);
    } finally {
      await app.close();
    }
  });

  it("refuses a body over the platform's own limit with 413 in the envelope", async () => {
    const app = await createHostApp(FeaturesAppModule, platform);
    limitJsonDepth(app);
    const base = await listen(app);
    try {
      // Over both defaults: Express's JSON parser takes 100 kB, Fastify 1 MiB.
      const large = JSON.stringify({ text: 'x'.repeat(1_100_000) });

      const refused = await send('POST', `${base}/features/flaky`, {
        raw: large,
        headers: { 'content-type': 'application/json' },
      });

      expectEnvelope(refused, 413, 'invalid_request');
    } finally {
      await app.close();
    }
  });
});

@Controller('features')
class FeaturesController {
  @Post('solo')
  @HttpCode(200)
  @Bulkhead('solo')
  async solo(): Promise<{ ok: true }> {
    await gate.promise;
    return { ok: true };
  }

  @Post('flaky')
  @HttpCode(200)
  @Bulkhead('flaky')
  @CircuitBreaker('flaky-api')
  flaky(): never {
    throw new BadGatewayException('the flaky dependency failed');
  }
}

let gate: Deferred<void> = deferred<void>();

/** The three feature modules a host may import one by one, each with its own options. */
@Module({
  imports: [
    LanesModule.forRoot({
      lanes: { solo: { concurrency: 1, queueCapacity: 0 }, flaky: { concurrency: 4, queueCapacity: 4 } },
      routes: false,
    }),
    CircuitBreakerModule.forRoot({ breakers: { 'flaky-api': { volumeThreshold: 2 } } }),
    RoutePoliciesModule,
  ],
  controllers: [FeaturesController],
  providers: [{ provide: APP_FILTER, useClass: EnvelopeExceptionFilter }],
})
class FeaturesAppModule {}

describe.each(PLATFORMS)(
  'a company app on %s that imports the lanes, the breakers and the route policies one by one',
  (platform) => {
    let app: INestApplication;
    let base: string;

    beforeEach(async () => {
      gate = deferred<void>();
      app = await createHostApp(FeaturesAppModule, platform);
      base = await listen(app);
    });

    afterEach(async () => {
      gate.resolve();
      await app.close();
    });

    it('refuses a request over the lane with queue_full, without the rest of Bulkhead', async () => {
      const first = send('POST', `${base}/features/solo`);
      await eventually(() => expect(app.get(LaneRegistry).get('solo')!.snapshot().active).toBe(1));

      const second = await send('POST', `${base}/features/solo`);

      expectEnvelope(second, 503, 'queue_full');
      gate.resolve();
      expect((await first).status).toBe(200);
      expect((await send('GET', `${base}/v1/lanes`)).status).toBe(404);
    });

    it('opens the breaker of the module it was given, shows it, and keeps its admin routes closed without AuthModule', async () => {
      expect((await send('POST', `${base}/features/flaky`)).status).toBe(502);
      expect((await send('POST', `${base}/features/flaky`)).status).toBe(502);

      expectEnvelope(await send('POST', `${base}/features/flaky`), 503, 'circuit_open');
      expect((await send('GET', `${base}/v1/circuits`)).body.circuits['flaky-api'].state).toBe('open');
      expect((await send('POST', `${base}/v1/admin/circuits/flaky-api/close`)).status).toBe(404);
    });
  },
);
