/**
 * The physical limit of proxying, for the proxy benchmark: a forwarder written by hand, in a
 * process of its own on loopback. A `node:http` server; each request's body is read whole and
 * sent on with `undici.request` (its global dispatcher, keep-alive connections) to the one URL
 * it was started with, and the upstream's status and body are the answer. No framework, no
 * checks, no limits: what any proxy of this shape must do at the least, one HTTP exchange in and
 * one out.
 *
 * Run as `node [node options] -r swc-register forwarder.ts` with FORWARDER_TO=<url>; prints
 * `FORWARDER_PORT=<port>` once it listens.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { request } from 'undici';
import { type Child, startChild, SWC_REGISTER, waitForLine } from '../support/processes';
import { listenOnLoopback } from '../support/server-process';

const READY = 'FORWARDER_PORT';

export interface Forwarder {
  readonly base: string;
  readonly child: Child;
}

/** Starts the forwarder to `to` (a full URL), with Node's `nodeArgs` (e.g. a profiler's). */
export async function startForwarder(to: string, nodeArgs: string[] = [], name = 'forwarder'): Promise<Forwarder> {
  const child = startChild(name, [...nodeArgs, '-r', SWC_REGISTER, __filename], { env: { FORWARDER_TO: to } });
  const port = Number((await waitForLine(child, new RegExp(`${READY}=(\\d+)`), 15_000))[1]);
  return { base: `http://127.0.0.1:${port}`, child };
}

function serve(to: string): void {
  const forward = (body: Buffer, response: ServerResponse) =>
    request(to, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
      .then(async (answer) => {
        const text = await answer.body.text();
        response.writeHead(answer.statusCode, { 'content-type': 'application/json' }).end(text);
      })
      .catch(() => {
        if (!response.headersSent) response.writeHead(502).end();
      });

  const server = createServer((incoming: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => void forward(Buffer.concat(chunks), response));
  });
  listenOnLoopback(server, READY);
}

if (require.main === module) {
  const to = process.env.FORWARDER_TO;
  if (!to) {
    process.stderr.write('forwarder: FORWARDER_TO is not set\n');
    process.exit(2);
  }
  serve(to);
}
