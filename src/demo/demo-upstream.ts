import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A stand-in renderer on loopback: answers after `{ "ms": n }` milliseconds, and records who called. */
export class DemoUpstream {
  readonly callIds: string[] = [];
  private readonly server: Server;

  constructor() {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        this.callIds.push(String(request.headers['x-call-id']));
        const { ms = 0 } = JSON.parse(Buffer.concat(chunks).toString() || '{}') as { ms?: number };
        const timer = setTimeout(() => {
          response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ preview: 'ok', ms }));
        }, ms);
        response.on('close', () => clearTimeout(timer));
      });
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/render`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
