import { ConsoleLogger, type INestApplication, Module } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import OpenAI from 'openai';
// What a company's app imports: the package's public entry, and nothing deeper.
import { BulkheadModule, type BulkheadRoutes } from '../../src';
import { createHostApp, listenOnLoopback, PLATFORMS } from '../support/create-app';
import type { PlatformName } from '../../src/common/nest';
import { expectEnvelope } from '../support/envelope';
import { send } from '../support/http-client';
import { closeAll, connectMcp } from '../mcp/mcp-client';
import { testTenant } from '../support/tenants';

/** A host app's logger at debug, keeping what Bulkhead says (its own context). */
class KeepingLogger extends ConsoleLogger {
  readonly said: string[] = [];

  override debug(message: unknown, context?: string): void {
    if (context === 'Bulkhead') this.said.push(String(message));
  }

  override log(): void {}

  override error(): void {}
}

function hostModule(routes: boolean | BulkheadRoutes) {
  @Module({
    imports: [BulkheadModule.forRoot({ lanes: { main: { concurrency: 1, queueCapacity: 1 } }, routes })],
  })
  class HostModule {}
  return HostModule;
}

async function startWith(
  routes: boolean | BulkheadRoutes,
  platform: PlatformName,
): Promise<{ app: INestApplication; logger: KeepingLogger; base: string }> {
  const logger = new KeepingLogger({ logLevels: ['error', 'warn', 'log', 'debug'] });
  const app = await createHostApp(hostModule(routes), platform, { logger });
  const base = await listenOnLoopback(app);
  return { app, logger, base };
}

describe.each(PLATFORMS)("the start-up line naming Bulkhead's own routes (debug), on %s", (platform) => {
  let app: INestApplication | undefined;

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('names the groups mounted and, for each left out, the switch that did it', async () => {
    const started = await startWith({ tools: false, mcp: false, docs: false, llm: false }, platform);
    app = started.app;

    expect(started.logger.said).toContain(
      "Bulkhead's own routes: lanes, circuits, events, admin, metrics, health mounted; " +
        'left out: tools (routes.tools: false), llm (routes.llm: false), mcp (routes.mcp: false), docs (routes.docs: false)',
    );
    const answer = await send('POST', `${started.base}/v1/tools/echo/invoke`, { json: {} });
    expect(answer.status).toBe(404);
  });

  it('says none are mounted with routes: false', async () => {
    const started = await startWith(false, platform);
    app = started.app;

    expect(started.logger.said.find((line) => line.startsWith("Bulkhead's own routes"))).toMatch(
      /^Bulkhead's own routes: none mounted; left out: tools \(routes\.tools: false\), llm/,
    );
  });
});

const ACME = testTenant('acme');

/** A host app with every group mounted, the LLM routes on an offline target, for one tenant's key. */
function everyRouteModule() {
  @Module({
    imports: [
      BulkheadModule.forRoot({
        auth: { apiKeys: [ACME.apiKey] },
        lanes: { main: { concurrency: 2, queueCapacity: 2 } },
        tools: { echo: { lane: 'main', kind: 'builtin', builtin: 'echo' } },
        llm: { routes: { echo: { lane: 'main', targets: [{ provider: 'fake', model: 'echo-1' }] } } },
      }),
    ],
  })
  class EveryRouteModule {}
  return EveryRouteModule;
}

describe('the LLM and MCP routes on Express', () => {
  let app: INestApplication | undefined;

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function start(configure: (app: NestExpressApplication) => void = () => undefined): Promise<string> {
    app = await createHostApp(everyRouteModule(), 'express');
    configure(app as NestExpressApplication);
    return listenOnLoopback(app);
  }

  it('mount with every other route and answer their SDKs: a chat, a stream, the models, MCP tools', async () => {
    const base = await start();
    const openai = new OpenAI({ apiKey: ACME.key, baseURL: `${base}/v1`, maxRetries: 0 });

    const { data, response } = await openai.chat.completions
      .create({ model: 'echo', messages: [{ role: 'user', content: 'hello express' }] })
      .withResponse();
    const stream = await openai.chat.completions.create({
      model: 'echo',
      messages: [{ role: 'user', content: 'streamed on express' }],
      stream: true,
    });
    let streamed = '';
    for await (const chunk of stream) streamed += chunk.choices[0]?.delta.content ?? '';
    const models = await openai.models.list();

    expect(data.choices[0]!.message.content).toBe('hello express');
    expect(response.headers.get('x-bulkhead-served-by')).toBe('fake/echo-1');
    expect(response.headers.get('x-call-id')).toEqual(expect.any(String));
    expect(streamed).toBe('streamed on express');
    expect(models.data.map((model) => model.id)).toEqual(['echo']);

    const mcp = await connectMcp(base, { authorization: `Bearer ${ACME.key}` });
    try {
      expect((await mcp.client.listTools()).tools.map((tool) => tool.name)).toContain('echo');
      const called = await mcp.client.callTool({ name: 'echo', arguments: { said: 'hi' } });
      expect(called.isError).toBeFalsy();
      expect(called.structuredContent).toMatchObject({ toolId: 'echo', result: { said: 'hi' } });
    } finally {
      await closeAll([mcp]);
    }
  });

  it("refuse a body over Express's own parser limit (100 kB) with 413 in the route's envelope", async () => {
    const base = await start();
    // Over Express's default, under Fastify's 1 MiB.
    const prompt = 'x'.repeat(200_000);

    const chat = await send('POST', `${base}/v1/chat/completions`, {
      json: { model: 'echo', messages: [{ role: 'user', content: prompt }] },
      headers: { authorization: `Bearer ${ACME.key}` },
    });
    const mcp = await send('POST', `${base}/mcp`, {
      json: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { padding: prompt } },
      headers: { authorization: `Bearer ${ACME.key}`, accept: 'application/json, text/event-stream' },
    });

    // Refused by the parser, before any route: the envelope, with OpenAI's fields under /v1/ (as on Fastify).
    expectEnvelope(chat, 413, 'invalid_request');
    expect(chat.body.error.type).toBe('invalid_request');
    expectEnvelope(mcp, 413, 'invalid_request');
  });

  it("take a large prompt once the host raises its parser's limit (useBodyParser)", async () => {
    const base = await start((express) => express.useBodyParser('json', { limit: '10mb' }));
    const prompt = 'x'.repeat(2_000_000);

    const answer = await send('POST', `${base}/v1/chat/completions`, {
      json: { model: 'echo', messages: [{ role: 'user', content: prompt }] },
      headers: { authorization: `Bearer ${ACME.key}` },
    });

    expect(answer.status).toBe(200);
    // The offline target echoes the prompt's start.
    expect(answer.body.choices[0].message.content).toMatch(/^x+$/);
  });

  it('leave the tools, the docs and the rest as they are when both are off', async () => {
    const started = await startWith({ llm: false, mcp: false }, 'express');
    try {
      expect((await send('GET', `${started.base}/health/ready`)).status).toBe(200);
      expect((await send('GET', `${started.base}/openapi.json`)).status).toBe(200);
      const page = await send('GET', `${started.base}/docs`);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.headers['content-security-policy']).toContain("script-src 'self'");
      // Every asset the page names is served, the document too; a name it does not have is the envelope's 404.
      const assets = (page.body as string).match(/\/docs\/static\/[\w.-]+/g) ?? [];
      expect(assets).toEqual(
        expect.arrayContaining(['/docs/static/swagger-ui-bundle.js', '/docs/static/swagger-initializer.js']),
      );
      for (const asset of assets) {
        expect([asset, (await send('GET', `${started.base}${asset}`)).status]).toEqual([asset, 200]);
      }
      expect((await send('GET', `${started.base}/docs/json`)).body).toEqual(
        (await send('GET', `${started.base}/openapi.json`)).body,
      );
      expectEnvelope(await send('GET', `${started.base}/docs/static/nope.js`), 404, 'not_found');
    } finally {
      await started.app.close();
    }
  });
});
