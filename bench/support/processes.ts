/**
 * Child processes of a benchmark, and stopping every one of them whatever happens: success,
 * an error, SIGINT, SIGTERM, or the benchmark running over its time budget.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { setTimeout as wait } from 'node:timers/promises';

export const ROOT = resolve(__dirname, '../..');
/** Lets `node -r SWC_REGISTER file.ts` run TypeScript directly, compiled by swc as Jest does. */
export const SWC_REGISTER = resolve(ROOT, 'test/support/swc-register.js');

const OUTPUT_TAIL_CHARS = 20_000;
const STOP_GRACE_MS = 5_000;

export interface Child {
  readonly name: string;
  readonly process: ChildProcess;
  /** The tail of what it wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves once it ended. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface StartOptions {
  /** Set on top of `PATH` and `NO_COLOR=1`; nothing else of this environment is passed on. */
  env?: Record<string, string>;
  /** Adds an IPC channel (`child.process.send`, `'message'`). */
  ipc?: boolean;
}

const children = new Set<Child>();
const cleanups: Array<() => void | Promise<void>> = [];

/**
 * Starts `node <args>` from the repository root with stdin, stdout and stderr piped. The child
 * holds our stdin pipe: a child script that calls `exitWithParent()` ends when we do, however
 * we end. Stopped by `cleanUp()` if still running.
 */
export function startChild(name: string, args: string[], options: StartOptions = {}): Child {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...options.env },
    stdio: options.ipc ? ['pipe', 'pipe', 'pipe', 'ipc'] : ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-OUTPUT_TAIL_CHARS));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  // A child that already left closes the pipe under a late write; that is not our failure.
  child.stdin!.on('error', () => undefined);
  const started: Child = {
    name,
    process: child,
    output: () => output,
    exited: new Promise((done) => child.once('exit', (code, signal) => done({ code, signal }))),
  };
  children.add(started);
  void started.exited.then(() => children.delete(started));
  return started;
}

/** Resolves with the first match of `pattern` in the child's output; fails on timeout or exit. */
export function waitForLine(child: Child, pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  return new Promise((done, fail) => {
    const check = () => {
      const match = pattern.exec(child.output());
      if (match) {
        finish();
        done(match);
      }
    };
    const timer = setTimeout(() => {
      finish();
      fail(new Error(`${child.name} did not print ${pattern} within ${timeoutMs} ms:\n${child.output()}`));
    }, timeoutMs);
    const onExit = () => {
      finish();
      fail(new Error(`${child.name} ended before printing ${pattern}:\n${child.output()}`));
    };
    const finish = () => {
      clearTimeout(timer);
      child.process.stdout!.off('data', check);
      child.process.stderr!.off('data', check);
      child.process.off('exit', onExit);
    };
    // Listeners added after startChild's own, so the output already holds the chunk.
    child.process.stdout!.on('data', check);
    child.process.stderr!.on('data', check);
    child.process.once('exit', onExit);
    if (isRunning(child.process)) check();
    else onExit();
  });
}

const RESULT_LINE = /^RESULT (.*)$/gm;

/** For a child script run by {@link runForResult}: hands its result to the parent. */
export function sendResult(result: unknown): void {
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
}

/**
 * Runs `node <nodeArgs> -r swc-register <script> <args>` to its end (stopped with everything
 * else on cleanup) and answers what it passed to {@link sendResult}; fails if it exits
 * otherwise than 0 or sends nothing. For measurements that need a process of their own: V8
 * flags (`--expose-gc`, a fixed young generation), or a heap nothing else has touched.
 */
export async function runForResult<T>(name: string, script: string, args: string[] = [], nodeArgs: string[] = []) {
  const child = startChild(name, [...nodeArgs, '-r', SWC_REGISTER, script, ...args]);
  const { code, signal } = await child.exited;
  const results = [...child.output().matchAll(RESULT_LINE)];
  if (code !== 0 || results.length === 0) {
    throw new Error(`${name} ended with ${code ?? signal} and no result:\n${child.output()}`);
  }
  return JSON.parse(results.at(-1)![1]!) as T;
}

/** SIGTERM and stdin closed; SIGKILL if it is still there after `graceMs`. */
export async function stopChild(child: Child, graceMs = STOP_GRACE_MS): Promise<void> {
  if (!isRunning(child.process)) return;
  child.process.kill('SIGTERM');
  child.process.stdin?.end();
  const gone = await Promise.race([child.exited.then(() => true), wait(graceMs).then(() => false)]);
  if (!gone) {
    child.process.kill('SIGKILL');
    await child.exited;
  }
}

/** Runs `cleanup` during `cleanUp()` (latest first); the returned function unregisters it. */
export function onCleanup(cleanup: () => void | Promise<void>): () => void {
  cleanups.push(cleanup);
  return () => {
    const index = cleanups.indexOf(cleanup);
    if (index !== -1) cleanups.splice(index, 1);
  };
}

let cleaning: Promise<void> | undefined;

/** Runs every registered cleanup, then stops every child still running. Safe to call twice. */
export function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    for (const cleanup of cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch (error) {
        process.stderr.write(`cleanup: ${(error as Error).message}\n`);
      }
    }
    await Promise.all([...children].map((child) => stopChild(child)));
  })();
  return cleaning;
}

/** True once `cleanUp()` began: start nothing new. */
export function isStopping(): boolean {
  return cleaning !== undefined;
}

// Last resort when the event loop is already going away: no child outlives us.
process.on('exit', () => {
  for (const child of children) if (isRunning(child.process)) child.process.kill('SIGKILL');
});

export interface RunOptions {
  /** The whole run, start-up to clean-up; over it, everything is stopped and the exit code is 1. */
  budgetMs: number;
}

/**
 * Runs a benchmark's `main` and always cleans up: on success, on an error (exit code 1), on
 * SIGINT/SIGTERM (130/143) and when the budget runs out (1).
 */
export function runMain(name: string, main: () => Promise<void>, { budgetMs }: RunOptions): void {
  let abandoned = false;
  const abandon = (why: string, code: number) => {
    // What fails while everything is being stopped is a consequence, not news.
    if (abandoned) return;
    abandoned = true;
    process.stderr.write(`\n${name}: ${why}; stopping\n`);
    process.exitCode = code;
    void cleanUp().then(() => process.exit(code));
  };
  const deadline = setTimeout(() => abandon(`over its ${budgetMs / 1_000} s budget`, 1), budgetMs);
  deadline.unref();
  process.once('SIGINT', () => abandon('SIGINT', 130));
  process.once('SIGTERM', () => abandon('SIGTERM', 143));
  process.on('uncaughtException', (error) => abandon(`uncaught ${error.stack ?? error.message}`, 1));
  process.on('unhandledRejection', (reason) => abandon(`unhandled rejection ${String(reason)}`, 1));
  main()
    .catch((error: unknown) => {
      if (abandoned) return;
      process.stderr.write(`${name} failed: ${(error as Error).stack ?? String(error)}\n`);
      process.exitCode = 1;
    })
    .finally(async () => {
      await cleanUp();
      clearTimeout(deadline);
      // A handle left open somewhere (a socket, a timer) must not keep a finished run alive.
      setTimeout(() => process.exit(), 1_000).unref();
    });
}

/** For a child script: exit when the parent holding our stdin goes, for whatever reason. */
export function exitWithParent(): void {
  process.stdin.resume();
  process.stdin.on('close', () => process.exit(0));
  process.stdin.on('end', () => process.exit(0));
}

function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}
