import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type Deferred, deferred } from './deferred';

export interface UpstreamRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** The client's port: which socket of the caller's pool it came on. */
  remotePort: number;
}

export type UpstreamHandler = (request: UpstreamRequest, response: ServerResponse) => void | Promise<void>;

/**
 * A real HTTP server on loopback standing in for a tool's upstream. It records every request
 * (with the remote port), counts connections, and tracks how many requests are in flight.
 */
export class Upstream {
  readonly requests: UpstreamRequest[] = [];
  connections = 0;
  inFlight = 0;
  peakInFlight = 0;
  /** Requests whose connection closed before the upstream answered. */
  abandoned = 0;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    private handler: UpstreamHandler,
  ) {}

  static async start(handler: UpstreamHandler = json(200, { ok: true })): Promise<Upstream> {
    const server = createServer();
    const upstream = new Upstream(server, handler);
    server.on('connection', (socket) => {
      upstream.connections++;
      upstream.sockets.add(socket);
      socket.on('close', () => upstream.sockets.delete(socket));
    });
    server.on('request', (request, response) => void upstream.serve(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return upstream;
  }

  /** Connections open now. */
  get openSockets(): number {
    return this.sockets.size;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  url(path = '/'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Answers later requests with `handler`. */
  use(handler: UpstreamHandler): void {
    this.handler = handler;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const recorded: UpstreamRequest = {
      method: request.method ?? '',
      path: request.url ?? '',
      headers: request.headers,
      body: Buffer.concat(chunks).toString('utf8'),
      remotePort: request.socket.remotePort ?? 0,
    };
    this.requests.push(recorded);
    this.inFlight++;
    this.peakInFlight = Math.max(this.peakInFlight, this.inFlight);
    response.on('close', () => {
      this.inFlight--;
      if (!response.writableEnded) this.abandoned++;
    });
    try {
      await this.handler(recorded, response);
    } catch {
      if (!response.headersSent) response.writeHead(500).end();
    }
  }
}

/** A handler answering JSON. */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): UpstreamHandler {
  return (_request, response) => {
    response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  };
}

/** A handler that never answers (until the client goes away). */
export const hang: UpstreamHandler = () => new Promise<void>(() => {});

/**
 * A handler that holds each request until the test resolves its gate, which it pushes onto
 * `gates`, then hands the request to `answer`.
 */
export function heldIn(gates: Array<Deferred<void>>, answer: UpstreamHandler): UpstreamHandler {
  return async (request, response) => {
    const gate = deferred<void>();
    gates.push(gate);
    await gate.promise;
    await answer(request, response);
  };
}
