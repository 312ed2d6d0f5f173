/**
 * A dependency with a capacity, for bench/adaptive-lanes.ts, in a process of its own on
 * loopback: `WORKERS` requests are served at once, each for the service time (± 20 %), and the
 * rest wait in its own FIFO queue, so its latency grows with the load sent to it, as a real
 * server's does once its threads or its GPU are busy. Routes:
 *   POST /work             served in turn; 200 `{"ok":true}` once its service time is over
 *   POST /slowdown?factor=F every later service time × F (1 restores it)
 *   GET  /stats            served, in service, queued, the longest queue seen; `cpuUs`
 *                          (`/stats?reset-peak` first sets the longest to what is queued now)
 * A request whose caller leaves while it waits is dropped from the queue.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { answerStats, listenOnLoopback, startServerProcess } from '../support/server-process';
import { stopChild, type Child } from '../support/processes';
import { call } from '../support/service';

export const WORKERS = 8;
export const SERVICE_MS = 20;
const READY = 'DEPENDENCY_PORT';

export interface DependencyStats {
  served: number;
  inService: number;
  queued: number;
  peakQueued: number;
  cpuUs: number;
}

export interface Dependency {
  url(path: string): string;
  slowdown(factor: number): Promise<void>;
  /** `resetPeak` first sets the longest queue seen to what is queued now. */
  stats(resetPeak?: boolean): Promise<DependencyStats>;
  stop(): Promise<void>;
}

export async function startDependency(name = 'dependency'): Promise<Dependency> {
  const { child, base }: { child: Child; base: string } = await startServerProcess(name, __filename, READY);
  return {
    url: (path) => `${base}${path}`,
    slowdown: async (factor) => {
      const answer = await call(`${base}/slowdown?factor=${factor}`, { method: 'POST' });
      if (answer.status !== 200) throw new Error(`slowdown answered ${answer.status}`);
    },
    stats: async (resetPeak = false) =>
      JSON.parse((await call(`${base}/stats${resetPeak ? '?reset-peak' : ''}`)).text) as DependencyStats,
    stop: () => stopChild(child),
  };
}

function serve(): void {
  let factor = 1;
  let inService = 0;
  let served = 0;
  let peakQueued = 0;
  const queue: ServerResponse[] = [];

  const next = () => {
    while (inService < WORKERS && queue.length > 0) {
      const response = queue.shift()!;
      if (response.destroyed) continue;
      inService++;
      const ms = SERVICE_MS * factor * (0.8 + 0.4 * Math.random());
      setTimeout(() => {
        inService--;
        served++;
        if (!response.destroyed) response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
        next();
      }, ms);
    }
  };

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://dependency');
    request.resume();
    switch (url.pathname) {
      case '/work':
        request.once('end', () => {
          queue.push(response);
          peakQueued = Math.max(peakQueued, queue.length);
          next();
        });
        return;
      case '/slowdown':
        factor = Number(url.searchParams.get('factor')) || 1;
        response.writeHead(200).end();
        return;
      case '/stats':
        if (url.searchParams.has('reset-peak')) peakQueued = queue.length;
        return answerStats(response, { served, inService, queued: queue.length, peakQueued });
      default:
        response.writeHead(404).end();
    }
  });
  listenOnLoopback(server, READY);
}

if (require.main === module) serve();
