import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { BulkheadModule, type BulkheadRoutes } from '../../src/index';
import { expectEnvelope } from '../support/envelope';
import { send } from '../support/http-client';
import { closeAll, connectMcp, type McpConnection } from './mcp-client';

/** A company's app that imports BulkheadModule with these route switches, and one tool. */
async function hostApp(routes: BulkheadRoutes): Promise<{ app: NestFastifyApplication; base: string }> {
  const module = BulkheadModule.forRoot({
    lanes: { main: { concurrency: 1, queueCapacity: 1 } },
    tools: { echo: { lane: 'main', kind: 'builtin', builtin: 'echo' } },
    auth: { allowAnonymous: true },
    routes,
  });
  const app = await NestFactory.create<NestFastifyApplication>(module, new FastifyAdapter(), {
    logger: false,
    abortOnError: false,
  });
  await app.listen(0, '127.0.0.1');
  return { app, base: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
}

describe("BulkheadModule's routes.mcp", () => {
  let app: NestFastifyApplication | undefined;
  const connections: McpConnection[] = [];

  afterEach(async () => {
    await closeAll(connections);
    await app?.close();
    app = undefined;
  });

  it('serves /mcp in a host app by default, beside the tool routes or without them', async () => {
    const host = await hostApp({ tools: false });
    app = host.app;
    const connection = await connectMcp(host.base);
    connections.push(connection);

    expect(await connection.client.callTool({ name: 'echo', arguments: { a: 1 } })).toMatchObject({
      structuredContent: { result: { a: 1 }, pool: 'isolated' },
    });
    expectEnvelope(await send('POST', `${host.base}/v1/tools/echo/invoke`, { json: {} }), 404, 'not_found');
  });

  it('leaves /mcp out when false', async () => {
    const host = await hostApp({ mcp: false });
    app = host.app;

    expectEnvelope(await send('POST', `${host.base}/mcp`, { json: {} }), 404, 'not_found');
    expect((await send('GET', `${host.base}/openapi.json`)).body.paths['/mcp']).toBeUndefined();
  });
});
