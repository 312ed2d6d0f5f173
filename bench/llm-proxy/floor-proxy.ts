/**
 * The least a proxy in Node can add to a chat request, for the sequential method's `floor` side:
 * a process of its own (`node:http` and one undici Pool, nothing else) that reads the client's
 * JSON body, parses it, POSTs it re-serialised to the upstream on a keep-alive connection, parses
 * the answer and writes it back serialised. No framework, auth, lane or accounting: what the
 * service adds beyond this side is its own cost and its framework's (Fastify, Nest).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Pool } from 'undici';
import { startServerProcess, listenOnLoopback } from '../support/server-process';
import { type Child, stopChild } from '../support/processes';

const READY = 'FLOOR_PROXY_PORT';

export interface FloorProxy {
  /** `http://127.0.0.1:<port>`: POST `/v1/chat/completions` as to the upstream. */
  readonly base: string;
  readonly child: Child;
  stop(): Promise<void>;
}

/** Starts the floor proxy in front of the upstream at `upstreamBase` (its `http://host:port`). */
export async function startFloorProxy(upstreamBase: string): Promise<FloorProxy> {
  const { child, base } = await startServerProcess('floor-proxy', __filename, READY, {
    FLOOR_PROXY_UPSTREAM: upstreamBase,
  });
  return { base, child, stop: () => stopChild(child) };
}

function serve(upstreamBase: string): void {
  const pool = new Pool(upstreamBase, { connections: 64 });
  const fail = (response: ServerResponse) => {
    if (!response.headersSent) response.writeHead(502, { 'content-type': 'application/json' });
    response.end('{"error":{"message":"upstream failed"}}');
  };
  const forward = async (request: IncomingMessage, response: ServerResponse, body: Buffer) => {
    const answer = await pool.request({
      method: 'POST',
      path: request.url ?? '/',
      headers: { 'content-type': 'application/json', authorization: request.headers.authorization ?? '' },
      body: JSON.stringify(JSON.parse(body.toString('utf8'))),
    });
    const text = JSON.stringify(JSON.parse(await answer.body.text()));
    response.writeHead(answer.statusCode, { 'content-type': 'application/json' }).end(text);
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('end', () => forward(request, response, Buffer.concat(chunks)).catch(() => fail(response)));
  });
  listenOnLoopback(server, READY);
}

if (require.main === module) serve(process.env.FLOOR_PROXY_UPSTREAM!);
