import { ConsoleLogger, type INestApplication, Module } from '@nestjs/common';
// What a company's app imports: the package's public entry, and nothing deeper.
import { BulkheadModule, type BulkheadRoutes } from '../../src';
import { createHostApp, listenOnLoopback, PLATFORMS } from '../support/create-app';
import type { PlatformName } from '../../src/common/nest';
import { expectEnvelope } from '../support/envelope';
import { send } from '../support/http-client';

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

describe('the LLM and MCP routes on Express', () => {
  it.each([
    [{}, 'routes: { llm: false, mcp: false }'],
    [{ mcp: false }, 'routes: { llm: false }'],
    [{ llm: false }, 'routes: { mcp: false }'],
  ] satisfies Array<[BulkheadRoutes, string]>)(
    'stop the app at start while mounted (%j), naming the switches to set',
    async (routes, set) => {
      const starting = createHostApp(hostModule(routes), 'express').then(listenOnLoopback);

      await expect(starting).rejects.toThrow(
        `run on @nestjs/platform-fastify only, and this app runs on express: set ${set}`,
      );
    },
  );

  it('leave the app to start once both are off, with the tools, the docs and the rest mounted', async () => {
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
