/**
 * The least a proxy in Node does for a streamed answer, the streaming benchmark's `floor` side: a
 * process of its own (`node:http` and one undici Pool, nothing else) that reads the client's body,
 * POSTs it unchanged to the upstream at the same path on a keep-alive connection, and writes the
 * upstream's status and content type back, then each read of its SSE body as it arrives. No
 * parsing, no framework, auth, lane, check or accounting: what the route adds beyond this side is
 * its own work and its framework's. The whole-answer counterpart is bench/llm-proxy/floor-proxy.ts.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Pool } from 'undici';
import { type Child, stopChild } from '../support/processes';
import { listenOnLoopback, startServerProcess } from '../support/server-process';

const READY = 'STREAM_FLOOR_PROXY_PORT';

export interface StreamFloorProxy {
  /** `http://127.0.0.1:<port>`: POST any path the upstream streams at, as to the upstream. */
  readonly base: string;
  readonly child: Child;
  stop(): Promise<void>;
}

/** Starts the floor proxy in front of the upstream at `upstreamOrigin` (its `http://host:port`). */
export async function startStreamFloorProxy(upstreamOrigin: string): Promise<StreamFloorProxy> {
  const { child, base } = await startServerProcess('stream-floor-proxy', __filename, READY, {
    STREAM_FLOOR_PROXY_UPSTREAM: upstreamOrigin,
  });
  return { base, child, stop: () => stopChild(child) };
}

function serve(upstreamOrigin: string): void {
  const pool = new Pool(upstreamOrigin, { connections: 64 });
  const fail = (response: ServerResponse) => {
    // After the head, the client can only learn of the failure from a stream cut short.
    if (response.headersSent) return void response.destroy();
    response.writeHead(502, { 'content-type': 'application/json' }).end('{"error":{"message":"upstream failed"}}');
  };
  // undici's `stream` writes each read of the upstream's body straight to the response (no
  // Readable in between: nothing a framework-less pass-through could skip), pauses the upstream
  // while the client's socket is full, and aborts the upstream's request if the client leaves once
  // the upstream's head has come. Each read leaves in a write of its own: it is written from the
  // socket's callback, and the response's cork is lifted on the next tick, right after it
  // (docs/pitfalls.md #32).
  const forward = (request: IncomingMessage, response: ServerResponse, body: Buffer) =>
    pool.stream(
      {
        method: 'POST',
        path: request.url ?? '/',
        headers: { 'content-type': 'application/json', authorization: request.headers.authorization ?? '' },
        body,
      },
      ({ statusCode, headers }) =>
        response.writeHead(statusCode, {
          'content-type': String(headers['content-type'] ?? 'application/octet-stream'),
          'cache-control': 'no-cache',
        }),
    );
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('end', () => forward(request, response, Buffer.concat(chunks)).catch(() => fail(response)));
  });
  listenOnLoopback(server, READY);
}

if (require.main === module) serve(process.env.STREAM_FLOOR_PROXY_UPSTREAM!);
