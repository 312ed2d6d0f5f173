import { ConsoleLogger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
// What a company's app imports: the package's public entry, and nothing deeper.
import { BulkheadModule, type BulkheadRoutes } from '../../src';

/** A host app's logger at debug, keeping what Bulkhead says (its own context). */
class KeepingLogger extends ConsoleLogger {
  readonly said: string[] = [];

  override debug(message: unknown, context?: string): void {
    if (context === 'Bulkhead') this.said.push(String(message));
  }

  override log(): void {}
}

async function startWith(
  routes: boolean | BulkheadRoutes,
): Promise<{ app: NestFastifyApplication; logger: KeepingLogger }> {
  @Module({
    imports: [BulkheadModule.forRoot({ lanes: { main: { concurrency: 1, queueCapacity: 1 } }, routes })],
  })
  class HostModule {}
  const logger = new KeepingLogger({ logLevels: ['error', 'warn', 'log', 'debug'] });
  const app = await NestFactory.create<NestFastifyApplication>(HostModule, new FastifyAdapter(), { logger });
  await app.listen(0, '127.0.0.1');
  return { app, logger };
}

describe("the start-up line naming Bulkhead's own routes (debug)", () => {
  let app: NestFastifyApplication | undefined;

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('names the groups mounted and, for each left out, the switch that did it', async () => {
    const started = await startWith({ tools: false, mcp: false, docs: false });
    app = started.app;

    expect(started.logger.said).toContain(
      "Bulkhead's own routes: llm, lanes, circuits, events, admin, metrics, health mounted; " +
        'left out: tools (routes.tools: false), mcp (routes.mcp: false), docs (routes.docs: false)',
    );
    const answer = await app.inject({ method: 'POST', url: '/v1/tools/echo/invoke', payload: {} });
    expect(answer.statusCode).toBe(404);
  });

  it('says none are mounted with routes: false', async () => {
    const started = await startWith(false);
    app = started.app;

    expect(started.logger.said.find((line) => line.startsWith("Bulkhead's own routes"))).toMatch(
      /^Bulkhead's own routes: none mounted; left out: tools \(routes\.tools: false\), llm/,
    );
  });
});
