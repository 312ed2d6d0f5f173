/**
 * A tool's upstream for benchmarks, in a process of its own on loopback, so its CPU is not
 * the service's or the load generator's. Routes (any method; a request body is read and
 * dropped):
 *   /fast        200 `{"ok":true}` at once
 *   /slow?ms=N&jitter=J
 *                200 `{"ok":true}` after N ms (default 1000), or a time drawn evenly from
 *                N × [1 - J, 1 + J] (J in 0..1, default 0); never if the caller leaves first
 *   /hang        never answers; ends when the caller closes the connection
 *   /stats       per route: requests, in flight, peak in flight (`/stats?reset-peak` first sets
 *                every peak to what is in flight now); `cpuUs`: the process's CPU time so far
 * Anything else is 404.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { call } from './service';
import { type Child, stopChild } from './processes';
import { answerStats, listenOnLoopback, startServerProcess } from './server-process';

export type UpstreamRoute = 'fast' | 'slow' | 'hang';

export interface RouteStats {
  requests: number;
  inFlight: number;
  peakInFlight: number;
}

export type UpstreamStats = Record<UpstreamRoute, RouteStats> & {
  /** CPU time (user + system) of the upstream process so far, in µs. */
  cpuUs: number;
};

export interface UpstreamServer {
  readonly base: string;
  readonly child: Child;
  /** `http://127.0.0.1:<port><path>` */
  url(path: string): string;
  /** Counts per route; `resetPeak` first sets each peak to what is in flight now. */
  stats(resetPeak?: boolean): Promise<UpstreamStats>;
  stop(): Promise<void>;
}

const READY = 'UPSTREAM_PORT';
const OK_BODY = '{"ok":true}';

/** Starts the upstream process and waits until it listens. */
export async function startUpstream(name = 'upstream'): Promise<UpstreamServer> {
  const { child, base } = await startServerProcess(name, __filename, READY);
  return {
    base,
    child,
    url: (path) => `${base}${path}`,
    stats: async (resetPeak = false) => {
      const answer = await call(`${base}/stats${resetPeak ? '?reset-peak' : ''}`);
      return JSON.parse(answer.text) as UpstreamStats;
    },
    stop: () => stopChild(child),
  };
}

function serve(): void {
  const stats: Record<UpstreamRoute, RouteStats> = {
    fast: { requests: 0, inFlight: 0, peakInFlight: 0 },
    slow: { requests: 0, inFlight: 0, peakInFlight: 0 },
    hang: { requests: 0, inFlight: 0, peakInFlight: 0 },
  };
  const track = (route: UpstreamRoute, response: ServerResponse) => {
    const counts = stats[route];
    counts.requests++;
    counts.inFlight++;
    counts.peakInFlight = Math.max(counts.peakInFlight, counts.inFlight);
    response.once('close', () => counts.inFlight--);
  };
  const ok = (response: ServerResponse) => {
    if (!response.destroyed) response.writeHead(200, { 'content-type': 'application/json' }).end(OK_BODY);
  };

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://upstream');
    request.resume();
    switch (url.pathname) {
      case '/fast':
        track('fast', response);
        request.once('end', () => ok(response));
        return;
      case '/slow': {
        track('slow', response);
        const ms = Number(url.searchParams.get('ms') ?? 1_000);
        const jitter = Math.min(1, Math.max(0, Number(url.searchParams.get('jitter') ?? 0) || 0));
        const base = Number.isFinite(ms) && ms >= 0 ? ms : 1_000;
        const timer = setTimeout(() => ok(response), base * (1 - jitter + 2 * jitter * Math.random()));
        response.once('close', () => clearTimeout(timer));
        return;
      }
      case '/hang':
        track('hang', response);
        return;
      case '/stats': {
        if (url.searchParams.has('reset-peak')) {
          for (const counts of Object.values(stats)) counts.peakInFlight = counts.inFlight;
        }
        return answerStats(response, stats);
      }
      default:
        response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
    }
  });
  listenOnLoopback(server, READY);
}

if (require.main === module) serve();
