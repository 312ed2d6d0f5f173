/**
 * The built service (`node dist/main.js`) with its stdout and stderr going to a file, as a
 * container runtime takes them: neither a pipe to this process (whose reading would cost the
 * load generator's CPU) nor the discarding of /dev/null (which would hide the service's writes).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { setTimeout as wait } from 'node:timers/promises';
import { stringify } from 'yaml';
import { cpuSecondsOf } from '../support/cpu';
import { onCleanup, ROOT } from '../support/processes';
import { call } from '../support/service';

const ENTRY = resolve(ROOT, 'dist/main.js');
const START_TIMEOUT_MS = 20_000;
const STOP_GRACE_MS = 5_000;

export interface LoggedService {
  readonly name: string;
  readonly base: string;
  url(path: string): string;
  /** CPU seconds the service process used so far. */
  cpuSeconds(): number;
  /** Bytes of log written so far. */
  logBytes(): number;
  /** The log so far, line by line (all of it once {@link stop} has returned). */
  logLines(): string[];
  /**
   * SIGTERM, then SIGKILL if it has not ended after a grace period. The log stays readable: the
   * service writes stdout asynchronously and what it held back reaches the file only as it exits.
   */
  stop(): Promise<void>;
}

/** A loopback port free now (the service is told it: at logLevel error it never says where it listens). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/** Writes `config` to a temporary file and starts the built service on it, logging to a file beside it. */
export async function startLoggedService(name: string, config: object): Promise<LoggedService> {
  if (!existsSync(ENTRY)) throw new Error('dist/main.js is missing: run `npm run build` first');
  const dir = mkdtempSync(resolve(tmpdir(), 'bulkhead-bench-logging-'));
  const configFile = resolve(dir, 'config.yaml');
  const logFile = resolve(dir, 'service.log');
  const port = await freePort();
  writeFileSync(configFile, stringify(config));
  const fd = openSync(logFile, 'a');
  const child: ChildProcess = spawn(process.execPath, [ENTRY], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', BULKHEAD_CONFIG: configFile, PORT: String(port) },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const running = () => child.exitCode === null && child.signalCode === null;
  const stop = async () => {
    if (running()) {
      child.kill('SIGTERM');
      if (!(await Promise.race([exited.then(() => true), wait(STOP_GRACE_MS).then(() => false)]))) {
        child.kill('SIGKILL');
        await exited;
      }
    }
  };
  onCleanup(async () => {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const read = () => readFileSync(logFile, 'utf8');

  const base = `http://127.0.0.1:${port}`;
  const deadline = performance.now() + START_TIMEOUT_MS;
  const live = () =>
    call(`${base}/health/live`, { timeoutMs: 1_000 }).then(
      (answer) => answer.status === 200,
      () => false,
    );
  while (!(await live())) {
    if (!running() || performance.now() > deadline) throw new Error(`${name} did not start:\n${read().slice(-4_000)}`);
    await wait(50);
  }
  return {
    name,
    base,
    url: (path) => `${base}${path}`,
    cpuSeconds: () => cpuSecondsOf(child.pid),
    logBytes: () => statSync(logFile).size,
    logLines: () =>
      read()
        .split('\n')
        .filter((line) => line !== ''),
    stop,
  };
}
