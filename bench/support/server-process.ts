/**
 * A benchmark's server in a process of its own on loopback, so its CPU is not the service's or
 * the load generator's (bench/support/upstream-server.ts, bench/llm-proxy/openai-upstream.ts).
 * The server module runs as the process and prints `<label>=<port>` once it listens; the parent
 * reads the port from that line.
 */
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Child, exitWithParent, startChild, SWC_REGISTER, waitForLine } from './processes';

/** Starts the server module `file` as the process `name` (with `env` set) and waits until it listens. */
export async function startServerProcess(
  name: string,
  file: string,
  label: string,
  env: Record<string, string> = {},
): Promise<{ child: Child; base: string }> {
  const child = startChild(name, ['-r', SWC_REGISTER, file], { env });
  const port = Number((await waitForLine(child, new RegExp(`${label}=(\\d+)`), 15_000))[1]);
  return { child, base: `http://127.0.0.1:${port}` };
}

/** In the server's process: listens on a free loopback port, says which, ends with its parent or on SIGTERM. */
export function listenOnLoopback(server: Server, label: string): void {
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${label}=${(server.address() as AddressInfo).port}\n`);
  });
  exitWithParent();
  process.once('SIGTERM', () => process.exit(0));
}

/** Answers `GET /stats`: `stats` and `cpuUs`, the server process's CPU time (user + system) so far. */
export function answerStats(response: ServerResponse, stats: object): void {
  const { user, system } = process.cpuUsage();
  response
    .writeHead(200, { 'content-type': 'application/json' })
    .end(JSON.stringify({ ...stats, cpuUs: user + system }));
}
