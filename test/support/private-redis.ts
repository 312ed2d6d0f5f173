import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { setTimeout as wait } from 'node:timers/promises';

/** How long a fresh redis-server may take to answer PING before start() gives up. */
const START_WITHIN_MS = 60_000;
/** How long one raw command may take before it counts as unanswered. */
const COMMAND_TIMEOUT_MS = 1_000;
/** Output kept from the child, for the message when it fails to start. */
const OUTPUT_LIMIT = 4_000;

/** Every redis-server child not exited yet, and every directory not removed yet: cleaned up on exit, whatever happened. */
const children = new Set<ChildProcess>();
const directories = new Set<string>();
let exitHookInstalled = false;

function cleanUpOnExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // 'exit' handlers may only do synchronous work: kill() and rmSync() are.
  const cleanUp = () => {
    for (const child of children) child.kill('SIGKILL');
    for (const directory of directories) rmSync(directory, { recursive: true, force: true });
  };
  process.on('exit', cleanUp);
  // A signal ends the process without 'exit': clean up, then die of the signal as before,
  // unless someone else listens for it and decides.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = () => {
      cleanUp();
      process.off(signal, onSignal);
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}

/** Whether `redis-server`, what {@link PrivateRedis} runs, is an executable file on PATH. */
export function redisServerOnPath(): boolean {
  for (const directory of (process.env.PATH ?? '').split(delimiter)) {
    if (directory === '') continue;
    const file = join(directory, 'redis-server');
    try {
      accessSync(file, constants.X_OK);
      if (statSync(file).isFile()) return true;
    } catch {
      // Not in this directory.
    }
  }
  return false;
}

function killOnExit(child: ChildProcess): void {
  cleanUpOnExit();
  children.add(child);
  child.once('exit', () => children.delete(child));
}

function newDirectory(): string {
  cleanUpOnExit();
  const directory = mkdtempSync(join(tmpdir(), 'bh-private-redis-'));
  directories.add(directory);
  return directory;
}

/**
 * A redis-server of one test file's own, on a free loopback port, that the test may stop and
 * start again on the same port (the shared Redis on 6379 is never touched); the global setup
 * starts one for the whole run when no shared Redis answers. It keeps no data
 * on its own (`--save "" --appendonly no`); `stop()` writes one snapshot first unless told not
 * to, so a restart finds the keys as a Redis with persistence would, and the test can tell a
 * double count from a lost one. Call `dispose()` in afterAll; a process that exits without it
 * still kills the child.
 */
export class PrivateRedis {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private output = '';

  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly options: PrivateRedisOptions,
  ) {}

  /** Starts a redis-server on a free port and resolves once it answers PING. */
  static async start(options: PrivateRedisOptions = {}): Promise<PrivateRedis> {
    const redis = new PrivateRedis(options.port ?? (await freePort()), newDirectory(), options);
    try {
      await redis.start();
    } catch (error) {
      await redis.dispose();
      throw error;
    }
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  /** Starts the server (again) on the same port; resolves once it answers PING. */
  async start(): Promise<void> {
    if (this.child) throw new Error(`redis-server on port ${this.port} is already running`);
    this.output = '';
    const { config, args = [] } = this.options;
    const configFile = join(this.dir, 'redis.conf');
    // A Sentinel rewrites its config file: written once, then kept across restarts.
    if (config !== undefined && !existsSync(configFile)) writeFileSync(configFile, config);
    const child = spawn(
      'redis-server',
      [
        ...(config !== undefined ? [configFile] : []),
        ...['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir],
        ...args,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    killOnExit(child);
    const keep = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString('utf8')).slice(-OUTPUT_LIMIT);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    let gone = false;
    this.exited = new Promise<void>((resolve) => {
      const done = () => {
        gone = true;
        if (this.child === child) this.child = undefined;
        resolve();
      };
      child.once('exit', done);
      // A spawn that fails (no redis-server) emits 'error' and may never emit 'exit'.
      child.once('error', (error) => {
        keep(Buffer.from(String(error)));
        done();
      });
    });
    const deadline = performance.now() + START_WITHIN_MS;
    for (;;) {
      if (gone) throw new Error(`redis-server on port ${this.port} exited at start:\n${this.output}`);
      if ((await this.command('PING').catch(() => '')) === '+PONG') return;
      if (performance.now() > deadline) {
        await this.stop({ keepData: false });
        throw new Error(`redis-server on port ${this.port} did not answer PING:\n${this.output}`);
      }
      await wait(20);
    }
  }

  /**
   * Stops the server: SIGKILL, then waits until the process has exited, so the port is closed
   * and every client's socket with it. With `keepData` (the default) it first writes a snapshot
   * (`SAVE`) that the next `start()` loads.
   */
  async stop(options: { keepData?: boolean } = {}): Promise<void> {
    const child = this.child;
    if (!child) return;
    const saved = (options.keepData ?? true) ? await this.command('SAVE').catch(String) : '+OK';
    // Killed even when the snapshot failed: a test never leaves a server behind.
    child.kill('SIGKILL');
    await this.exited;
    if (saved !== '+OK') throw new Error(`redis-server on port ${this.port} answered SAVE with ${saved}`);
  }

  /** Stops the server without saving and removes its directory. Safe to call more than once. */
  async dispose(): Promise<void> {
    await this.stop({ keepData: false });
    rmSync(this.dir, { recursive: true, force: true });
    directories.delete(this.dir);
  }

  /** Sends one command and answers the first line of the reply (`+PONG`, `+OK`, `-ERR ...`). */
  command(...args: string[]): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const socket = connect(this.port, '127.0.0.1');
      let reply = '';
      socket.setTimeout(COMMAND_TIMEOUT_MS, () => socket.destroy(new Error(`no answer to ${args[0]}`)));
      socket.on('error', reject);
      socket.on('data', (chunk) => {
        reply += chunk.toString('utf8');
        const end = reply.indexOf('\r\n');
        if (end === -1) return;
        socket.destroy();
        resolve(reply.slice(0, end));
      });
      socket.on('close', () => reject(new Error(`connection closed before an answer to ${args[0]}`)));
      socket.write(`*${args.length}\r\n${args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join('')}`);
    });
  }
}

export interface PrivateRedisOptions {
  /** A port of its own choosing (a cluster node announces it); a free one by default. */
  port?: number;
  /** More arguments to redis-server (`--cluster-enabled yes`, `--sentinel`, `--replicaof …`). */
  args?: string[];
  /** A config file's text, given to redis-server first (a Sentinel needs one it can rewrite). */
  config?: string;
}

/**
 * A TCP link to a {@link PrivateRedis} on a port of its own, that a test can cut (every
 * connection closed, the port refusing) and restore (the same port accepting again) while
 * Redis keeps running with its data and its script cache: a network cut, not a restart.
 * Point the service at `url`; `close()` it when done.
 */
export class RedisLink {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();

  private constructor(
    readonly port: number,
    private readonly redis: PrivateRedis,
  ) {}

  static async open(redis: PrivateRedis): Promise<RedisLink> {
    const link = new RedisLink(await freePort(), redis);
    await link.restore();
    return link;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Accepts connections on the link's port again, each piped to Redis. */
  async restore(): Promise<void> {
    if (this.server) return;
    const server = createServer((client) => {
      const upstream = connect(this.redis.port, '127.0.0.1');
      for (const [from, to] of [
        [client, upstream],
        [upstream, client],
      ]) {
        this.sockets.add(from);
        from.on('error', () => to.destroy());
        from.on('close', () => {
          this.sockets.delete(from);
          to.destroy();
        });
        from.pipe(to);
      }
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', resolve);
    });
    this.server = server;
  }

  /** Closes every connection through the link and stops accepting new ones; resolves once all are closed. */
  async cut(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  close(): Promise<void> {
    return this.cut();
  }
}

/** A loopback port free right now (the OS picks it; nothing holds it afterwards). */
export function freePort(): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
