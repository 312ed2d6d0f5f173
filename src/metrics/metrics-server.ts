import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { METRICS_MODULE_OPTIONS, type MetricsModuleOptions } from './metrics.module-definition';
import { MetricsRegistry } from './metrics-registry.provider';

/** Prometheus's text exposition format, as `GET /metrics` answers it. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * `GET /metrics` on a port of its own (`server.metricsPort`), so a NetworkPolicy can open the
 * scrape port to Prometheus and the API port to the ingress, each alone. A bare node:http server:
 * it answers one route, and must keep answering while the app drains (metrics matter most then),
 * so it closes only when the app has shut down. Nothing else is served on it.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Bulkhead');
  private server: Server | undefined;

  constructor(
    @Inject(METRICS_MODULE_OPTIONS) private readonly options: MetricsModuleOptions,
    private readonly registry: MetricsRegistry,
  ) {}

  /** The port it listens on (useful when configured as 0 in tests), or undefined when off. */
  get port(): number | undefined {
    const address = this.server?.address();
    return address && typeof address === 'object' ? (address as AddressInfo).port : undefined;
  }

  async onApplicationBootstrap(): Promise<void> {
    const { port, host = '0.0.0.0' } = this.options;
    if (port === undefined) return;
    const server = createServer((request, response) => void this.answer(request, response));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.logger.log(`metrics on port ${this.port}`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '').split('?', 1)[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: GET /metrics\n');
      return;
    }
    try {
      const text = await this.registry.metrics();
      response.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE });
      response.end(request.method === 'HEAD' ? undefined : text);
    } catch {
      response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics could not be collected\n');
    }
  }
}
