import type { DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { BulkheadModule, type BulkheadRoutes } from '../../src/index';
import type { OpenApiDocument } from '../../src/openapi';
import { expectEnvelope } from '../support/envelope';
import { send } from '../support/http-client';
import { documentedRoutes, servedRoutes } from './document-answers';

/** A company's app that imports BulkheadModule with these route switches. */
async function hostApp(routes: BulkheadRoutes): Promise<{ app: NestFastifyApplication; base: string }> {
  const module: DynamicModule = BulkheadModule.forRoot({
    lanes: { main: { concurrency: 1, queueCapacity: 1 } },
    routes,
  });
  const app = await NestFactory.create<NestFastifyApplication>(module, new FastifyAdapter(), {
    logger: false,
    abortOnError: false,
  });
  await app.listen(0, '127.0.0.1');
  return { app, base: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
}

describe("BulkheadModule's routes.docs", () => {
  let app: NestFastifyApplication | undefined;

  afterEach(() => app?.close());

  it('leaves out /openapi.json and /docs when false', async () => {
    const host = await hostApp({ docs: false });
    app = host.app;

    expectEnvelope(await send('GET', `${host.base}/openapi.json`), 404, 'not_found');
    expectEnvelope(await send('GET', `${host.base}/docs`), 404, 'not_found');
    expect((await send('GET', `${host.base}/health/live`)).status).toBe(200);
  });

  it('documents only the routes the app mounts', async () => {
    const host = await hostApp({ tools: false, llm: false, admin: false, events: false });
    app = host.app;

    const document = (await send('GET', `${host.base}/openapi.json`)).body as OpenApiDocument;

    const served = servedRoutes(app.getHttpAdapter().getInstance().printRoutes({ commonPrefix: false }));
    expect(served.filter((route) => !route.startsWith('GET /docs/'))).toEqual(documentedRoutes(document));
    expect(Object.keys(document.paths).sort()).toEqual([
      '/docs',
      '/health/live',
      '/health/ready',
      '/mcp',
      '/metrics',
      '/openapi.json',
      '/v1/admin/circuits',
      '/v1/admin/circuits/{name}/close',
      '/v1/admin/circuits/{name}/open',
      '/v1/circuits',
      '/v1/lanes',
    ]);
  });
});
