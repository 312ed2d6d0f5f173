import { Controller, HttpCode, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type Redis from 'ioredis';
import { Cluster } from 'ioredis';
// What a company's app imports: the package's public entry, and nothing deeper.
import {
  Bulkhead,
  BulkheadModule,
  type BulkheadModuleOptions,
  createRedisConnection,
  type RedisClient,
} from '../../src/index';
import { describeRedis, describeRedisServer } from '../support/redis-availability';
import { PrivateRedisCluster } from '../support/redis-topologies';
import { closeRedis, connectRedis, deleteKeysUnder, keysUnder, silentLogger, uniquePrefix } from '../support/redis';
import { send } from '../support/http-client';
import { testTenant } from '../support/tenants';

const ACME = testTenant('acme');

@Controller('work')
class WorkController {
  @Post()
  @HttpCode(200)
  @Bulkhead('work')
  work(): { done: true } {
    return { done: true };
  }
}

/**
 * The company's app: its own module importing BulkheadModule with `client` as the shared-state
 * connection (and `extra` config), the work controller, listening on a loopback port.
 */
async function startHostApp(
  client: RedisClient,
  prefix: string,
  extra: Partial<BulkheadModuleOptions> = {},
): Promise<NestFastifyApplication> {
  @Module({
    imports: [
      BulkheadModule.forRoot({
        lanes: { work: { concurrency: 2, queueCapacity: 2 } },
        auth: { apiKeys: [ACME.apiKey] },
        // The URL is the app's to keep or not: its own client is used, not a new connection.
        store: { kind: 'redis', url: 'redis://127.0.0.1:1', prefix },
        redis: client,
        ...extra,
      }),
    ],
    controllers: [WorkController],
  })
  class HostAppModule {}
  const app = await NestFactory.create<NestFastifyApplication>(HostAppModule, new FastifyAdapter(), {
    logger: false,
    abortOnError: false,
  });
  await app.listen(0, '127.0.0.1');
  return app;
}

describeRedis('a company app that hands Bulkhead its own ioredis client', () => {
  let client: Redis;
  let prefix: string;
  let app: NestFastifyApplication;

  beforeEach(async () => {
    client = await connectRedis();
    prefix = uniquePrefix('bh-host');
    app = await startHostApp(client, prefix);
  });

  afterEach(async () => {
    await app?.close();
    await deleteKeysUnder(client, prefix);
    await closeRedis(client);
  });

  const url = async (path: string) => `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}${path}`;

  it('keeps the shared state on that client, under the configured prefix', async () => {
    expect((await send('POST', await url('/work'), { headers: ACME.headers })).status).toBe(200);

    const keys = await keysUnder(client, prefix);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every((key) => key.startsWith(`${prefix}{`))).toBe(true);
    expect((await send('GET', await url('/health/ready'))).body.info.redis.status).toBe('up');
  });

  it('leaves the client open when the app closes: the app owns it', async () => {
    await app.close();

    expect(client.status).toBe('ready');
    expect(await client.ping()).toBe('PONG');
  });
});

describeRedisServer('a company app that hands Bulkhead its own Redis Cluster client', () => {
  let cluster: PrivateRedisCluster;
  let client: Cluster;
  let app: NestFastifyApplication;
  const prefix = uniquePrefix('bh-host-cluster');

  beforeAll(async () => {
    cluster = await PrivateRedisCluster.start({ primaries: 3 });
    client = createRedisConnection({
      cluster: { nodes: cluster.urls },
      commandTimeoutMs: 2_000,
      logger: silentLogger,
    }) as Cluster;
    // As a company's app would: its client ready before it serves. A Cluster client connects on
    // its own time (its nodes, then the slots it reads from one); on a loaded machine that took
    // past the first request, and until it is ready /health/ready says so, rightly.
    if (client.status !== 'ready') await new Promise((ready) => client.once('ready', ready));
    app = await startHostApp(client, prefix, { rateLimits: { tenants: { acme: { rpm: 100 } } } });
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    client?.disconnect();
    await cluster?.dispose();
  }, 60_000);

  it('keeps the shared state on the cluster through that client, and leaves it open at close', async () => {
    const url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}`;

    expect((await send('POST', `${url}/work`, { headers: ACME.headers })).status).toBe(200);
    expect((await send('GET', `${url}/health/ready`)).body.info.redis.status).toBe('up');
    const keys = (await Promise.all(client.nodes('master').map((node) => node.keys(`${prefix}*`)))).flat();
    expect(keys.length).toBeGreaterThan(0);

    await app.close();
    expect(client.status).toBe('ready');
  });
});
