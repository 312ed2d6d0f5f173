import { ConsoleLogger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
// What a company's app imports: the package's public entry, and nothing deeper.
import { BulkheadModule } from '../../src';
import { invoke } from '../support/http-client';
import { Upstream } from '../support/upstream';

/** A host app's own logger: Nest's ConsoleLogger at its levels, keeping what it is asked to write. */
class HostLogger extends ConsoleLogger {
  readonly written: Array<[string, unknown]> = [];

  override log(message: unknown): void {
    if (this.isLevelEnabled('log')) this.written.push(['log', message]);
  }

  override warn(message: unknown): void {
    if (this.isLevelEnabled('warn')) this.written.push(['warn', message]);
  }

  override debug(message: unknown): void {
    if (this.isLevelEnabled('debug')) this.written.push(['debug', message]);
  }
}

let hungUrl = '';

@Module({
  imports: [
    BulkheadModule.forRootAsync({
      useFactory: () => ({
        auth: { allowAnonymous: true },
        lanes: { main: { concurrency: 2, queueCapacity: 2 } },
        containment: { egress: { allowHosts: ['*'], allowPrivateCidrs: ['127.0.0.0/8'] } },
        tools: {
          echo: { lane: 'main', kind: 'builtin', builtin: 'echo' },
          slow: { lane: 'main', kind: 'http', url: hungUrl, timeoutMs: 50, retry: { maxAttempts: 1 } },
        },
      }),
    }),
  ],
})
class HostAppModule {}

describe('call lines in a host app that has its own logger', () => {
  let hung: Upstream;
  let app: NestFastifyApplication;
  let logger: HostLogger;

  beforeEach(async () => {
    hung = await Upstream.start(() => new Promise<void>(() => undefined));
    hungUrl = hung.url('/');
    logger = new HostLogger({ logLevels: ['error', 'warn', 'log'] });
    app = await NestFactory.create<NestFastifyApplication>(HostAppModule, new FastifyAdapter(), { logger });
    await app.listen(0, '127.0.0.1');
  });

  afterEach(async () => {
    await app.close();
    await hung.close();
  });

  it('go to the host’s logger, as object messages with the call’s fields, at its levels', async () => {
    const base = (await app.getUrl()).replace('[::1]', '127.0.0.1');

    expect((await invoke(base, 'slow', {}, { 'x-call-id': 'c-slow' })).status).toBe(504);
    expect((await invoke(base, 'echo', {}, { 'x-call-id': 'c-ok' })).status).toBe(200);

    const calls = logger.written.filter(([, message]) => (message as { event?: string }).event === 'call');
    expect(calls).toEqual([
      [
        'warn',
        expect.objectContaining({
          msg: 'call failed (timeout)',
          callId: 'c-slow',
          tenant: 'anonymous',
          tool: 'slow',
          kind: 'timeout',
          attempts: 1,
        }),
      ],
    ]);
  });
});
