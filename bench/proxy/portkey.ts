/**
 * Portkey's AI gateway (`@portkey-ai/gateway`, a devDependency) as a process of its own, for
 * the proxy benchmark: `build/start-server.js --port=N --headless` on a free port.
 *
 * Portkey 1.15.2 does not run as installed here: its `^1.3.3` range for `@hono/node-server`
 * resolves to a version above 1.14.2, whose Response keeps fetch's immutable Headers, and
 * Portkey then fails every proxied call with `TypeError: immutable` while adding its own
 * response headers (Portkey-AI/gateway#1389). With such a version a three-line shim is
 * preloaded into Portkey's process (`--import data:...`) that re-wraps each `fetch` answer in a
 * Response with ordinary headers: one extra Response object per call, nothing else of
 * Portkey's changes. Portkey listens on every interface (it has no host option).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { type Child, ROOT, startChild, stopChild, waitForLine } from '../support/processes';

/** The last @hono/node-server that Portkey 1.15.2 works with unaided (Portkey-AI/gateway#1389). */
const LAST_GOOD_HONO_NODE_SERVER = [1, 14, 2];

/** Re-wraps every `fetch` answer so its headers can be added to, as Portkey expects. */
const FETCH_SHIM = [
  'const nativeFetch = globalThis.fetch;',
  'const NativeResponse = globalThis.Response;',
  'globalThis.fetch = async (...args) => {',
  '  const r = await nativeFetch(...args);',
  '  return new NativeResponse(r.body, { status: r.status, statusText: r.statusText, headers: r.headers });',
  '};',
].join('\n');

export interface PortkeyInfo {
  available: boolean;
  /** Why it was left out, if it was. */
  reason?: string;
  version?: string;
  honoNodeServer?: string;
  fetchShim?: boolean;
}

function portkeyPackage(): { entry: string; version: string; dir: string } | undefined {
  const manifest = resolve(ROOT, 'node_modules/@portkey-ai/gateway/package.json');
  if (!existsSync(manifest)) return undefined;
  const { version, bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string; bin: string };
  const dir = dirname(manifest);
  return { entry: resolve(dir, bin), version, dir };
}

/** The @hono/node-server Portkey's own imports resolve to. */
function honoNodeServerVersion(portkeyDir: string): string | undefined {
  for (const base of [resolve(portkeyDir, 'node_modules'), resolve(ROOT, 'node_modules')]) {
    const manifest = resolve(base, '@hono/node-server/package.json');
    if (existsSync(manifest)) return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
  }
  return undefined;
}

function newerThan(version: string, than: number[]): boolean {
  const parts = version.split(/[.-]/).map(Number);
  for (let i = 0; i < than.length; i++) {
    if ((parts[i] ?? 0) !== than[i]) return (parts[i] ?? 0) > than[i]!;
  }
  return false;
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

export interface Portkey {
  info: PortkeyInfo;
  child?: Child;
  base?: string;
}

/**
 * Starts Portkey's gateway on a free port (shimmed where its @hono/node-server needs it), or says
 * why it cannot: not `wanted` (`--no-portkey`), not installed, or it did not start.
 */
export async function startPortkey(wanted = true): Promise<Portkey> {
  if (!wanted) return { info: { available: false, reason: '--no-portkey' } };
  const found = portkeyPackage();
  if (!found) return { info: { available: false, reason: '@portkey-ai/gateway is not installed' } };
  const honoNodeServer = honoNodeServerVersion(found.dir);
  const fetchShim = honoNodeServer === undefined || newerThan(honoNodeServer, LAST_GOOD_HONO_NODE_SERVER);
  const info: PortkeyInfo = { available: true, version: found.version, honoNodeServer, fetchShim };
  const port = await freePort();
  const args = [
    ...(fetchShim ? ['--import', `data:text/javascript,${encodeURIComponent(FETCH_SHIM)}`] : []),
    found.entry,
    `--port=${port}`,
    '--headless',
  ];
  const child = startChild('portkey', args);
  try {
    await waitForLine(child, /Ready for connections/, 20_000);
  } catch (error) {
    await stopChild(child);
    return { info: { ...info, available: false, reason: `did not start: ${(error as Error).message.slice(0, 500)}` } };
  }
  return { info, child, base: `http://127.0.0.1:${port}` };
}

/** Stops a started Portkey whose probe failed, and says in `info` why it is left out. */
export async function leavePortkeyOut(info: PortkeyInfo, child: Child, why: string): Promise<void> {
  info.available = false;
  info.reason = `${why}; its output: ${child.output().slice(-800)}`;
  await stopChild(child);
}

/** Its version and whether it runs shimmed, or why it is left out. */
export function describePortkey(info: PortkeyInfo): string {
  return info.available
    ? `${info.version} (@hono/node-server ${info.honoNodeServer ?? '?'}${info.fetchShim ? ', with the fetch shim' : ''})`
    : `left out: ${info.reason}`;
}
