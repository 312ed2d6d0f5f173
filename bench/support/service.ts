/**
 * The service under test as a child process: `node dist/main.js` (build first) with a
 * temporary YAML config on loopback and a port of its own; plus the small HTTP client the
 * benchmarks use for control requests (admin, lanes, metrics, upstream stats).
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type IncomingHttpHeaders, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { setTimeout as wait } from 'node:timers/promises';
import { parse, stringify } from 'yaml';
import type { LaneSnapshot } from '../../src/bulkhead';
import { parsePromText, type PromText } from '../../test/support/prom-text';
import { type Child, onCleanup, ROOT, startChild, stopChild, waitForLine } from './processes';

const ENTRY = resolve(ROOT, 'dist/main.js');
const LISTENING = /listening on http:\/\/[^\s:]+:(\d+)/;

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export interface CallOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** @default 5000 */
  timeoutMs?: number;
}

/** One request on a connection of its own; the whole answer as text. */
export function call(url: string, { method = 'GET', headers = {}, body, timeoutMs = 5_000 }: CallOptions = {}) {
  return new Promise<Answer>((done, fail) => {
    const request = httpRequest(url, { method, headers, agent: false, timeout: timeoutMs }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => done({ status: response.statusCode ?? 0, headers: response.headers, text }));
      response.on('error', fail);
    });
    request.on('timeout', () => request.destroy(new Error(`${method} ${url} timed out`)));
    request.on('error', fail);
    request.end(body);
  });
}

/** Polls `check` every `everyMs` until it is true; fails after `timeoutMs`. */
export async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 5_000, everyMs = 20) {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await wait(everyMs);
  }
}

export interface ApiKey {
  tenant: string;
  key: string;
  /** The `auth.apiKeys` entry for the config. */
  entry: { sha256: string; tenant: string };
  /** `authorization` and `content-type: application/json`. */
  headers: Record<string, string>;
}

/** A fresh random API key for `tenant`. */
export function apiKey(tenant: string): ApiKey {
  const key = `${tenant}-${randomBytes(16).toString('hex')}`;
  return {
    tenant,
    key,
    entry: { sha256: createHash('sha256').update(key).digest('hex'), tenant },
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  };
}

export interface Service {
  /** `http://127.0.0.1:<port>` */
  readonly base: string;
  readonly child: Child;
  url(path: string): string;
  /** A control request to the service (one connection, not a measured call). */
  call(path: string, options?: CallOptions): Promise<Answer>;
  /** `GET /metrics`, parsed. */
  metrics(): Promise<PromText>;
  /** The service process's CPU time so far (`process_cpu_seconds_total`), in seconds. */
  cpuSeconds(): Promise<number>;
  /** `GET /v1/lanes` with the given caller's headers. */
  lanes(headers?: Record<string, string>): Promise<Record<string, LaneSnapshot>>;
  /** SIGTERM (the service drains for `server.shutdownDrainMs`), SIGKILL if it does not end. */
  stop(): Promise<void>;
}

export interface ServiceOptions {
  name?: string;
  /** Node's own options for the service process, e.g. `--inspect=127.0.0.1:0`. */
  nodeArgs?: string[];
  /** More environment for the service; `BULKHEAD_CONFIG` and `PORT=0` are set here. */
  env?: Record<string, string>;
  /** @default 20000 */
  startTimeoutMs?: number;
}

/**
 * Writes `config` (YAML text or an object) to a temporary file and starts the built service
 * on it, on 127.0.0.1 and a port the system picks (`server.host` defaults to 127.0.0.1 here;
 * `server.shutdownDrainMs` to 1000). Resolves once it logged `listening on http://...`.
 */
export async function startService(config: string | object, options: ServiceOptions = {}): Promise<Service> {
  const { name = 'service', nodeArgs = [], env = {}, startTimeoutMs = 20_000 } = options;
  if (!existsSync(ENTRY)) throw new Error('dist/main.js is missing: run `npm run build` first');
  const document = (typeof config === 'string' ? parse(config) : structuredClone(config)) as {
    server?: Record<string, unknown>;
  };
  document.server = { host: '127.0.0.1', shutdownDrainMs: 1_000, ...document.server };

  const dir = mkdtempSync(resolve(tmpdir(), 'bulkhead-bench-'));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  const configFile = resolve(dir, 'config.yaml');
  writeFileSync(configFile, stringify(document));

  const child = startChild(name, [...nodeArgs, ENTRY], { env: { ...env, BULKHEAD_CONFIG: configFile, PORT: '0' } });
  const port = Number((await waitForLine(child, LISTENING, startTimeoutMs))[1]);
  const base = `http://127.0.0.1:${port}`;
  const service: Service = {
    base,
    child,
    url: (path) => `${base}${path}`,
    call: (path, callOptions) => call(`${base}${path}`, callOptions),
    metrics: async () => parsePromText((await call(`${base}/metrics`)).text),
    cpuSeconds: async () => {
      const sample = (await service.metrics()).samples.find((s) => s.name === 'process_cpu_seconds_total');
      if (!sample) throw new Error('the service reports no process_cpu_seconds_total');
      return sample.value;
    },
    lanes: async (headers = {}) => {
      const answer = await call(`${base}/v1/lanes`, { headers });
      if (answer.status !== 200) throw new Error(`GET /v1/lanes answered ${answer.status}: ${answer.text}`);
      return (JSON.parse(answer.text) as { lanes: Record<string, LaneSnapshot> }).lanes;
    },
    stop: () => stopChild(child),
  };
  return service;
}
