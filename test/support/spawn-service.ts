import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

/**
 * How long a spawned service may take to say it listens. Minutes, not seconds: on a loaded laptop
 * (load 10 on 2 cores) compiling src/ through swc and booting Nest took over 15 s, and a bound a
 * busy machine can miss fails a test that proves nothing about the service. The wait ends on the
 * child's own line, so a quiet machine never waits for this bound.
 */
export const STARTUP_BOUND_MS = 120_000;

/** A per-test timeout for a test that starts a service: the start-up bound and room for the test itself (a child run of its own, too). */
export const SPAWNED_TEST_TIMEOUT_MS = 300_000;

/** How much of the child's stderr an early exit shows: enough for a stack or the config problems. */
const STDERR_TAIL_CHARS = 4_000;

export interface ServiceProcess {
  child: ChildProcess;
  /** Everything the process wrote so far. */
  output(): string;
  /** The last few thousand characters the process wrote to stderr. */
  stderrTail(): string;
  /** Resolves with the exit code (or the signal) once the process ends. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Runs src/main.ts in a child process, exactly as `npm start` would run the build, with the
 * given environment on top of a minimal one. Kill it (or wait for `exited`) in every test.
 * `entry` runs another script instead (one that imports src/main.ts and adds to it).
 */
export function spawnService(env: Record<string, string>, entry = resolve(ROOT, 'src/main.ts')): ServiceProcess {
  const child = spawn(process.execPath, ['-r', resolve(__dirname, 'swc-register.js'), entry], {
    cwd: ROOT,
    // Without the warm-up (a few seconds each) unless the test asks for it: suites start many services.
    env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', BULKHEAD_WARM_UP_MS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    stderr = (stderr + chunk.toString()).slice(-STDERR_TAIL_CHARS);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    // 'close', not 'exit': by then both pipes are drained, so output() holds the child's last words.
    child.on('close', (code, signal) => done({ code, signal })),
  );
  return { child, output: () => output, stderrTail: () => stderr, exited };
}

const LISTENING = /listening on http:\/\/127\.0\.0\.1:(\d+)/;

/**
 * Resolves with the port once the child logs its `listening on http://127.0.0.1:<port>` line
 * (src/main.ts writes it after `app.listen` resolved): readiness by the child's own word, not by
 * polling against a clock. Fails at once if the child ends first, with its exit code and the tail
 * of its stderr; fails after `boundMs` only if the child neither listens nor ends.
 */
export function listeningPort(service: ServiceProcess, boundMs = STARTUP_BOUND_MS): Promise<number> {
  return new Promise<number>((done, fail) => {
    const streams = [service.child.stdout!, service.child.stderr!];
    const settle = (finish: () => void) => {
      clearTimeout(bound);
      for (const stream of streams) stream.off('data', check);
      finish();
    };
    // Runs after spawnService's own listener appended the chunk, so output() holds it.
    const check = () => {
      const match = LISTENING.exec(service.output());
      if (match) settle(() => done(Number(match[1])));
    };
    const bound = setTimeout(
      () => settle(() => fail(new Error(`the service did not listen within ${boundMs} ms:\n${service.output()}`))),
      boundMs,
    );
    for (const stream of streams) stream.on('data', check);
    void service.exited.then(({ code, signal }) =>
      settle(() =>
        fail(
          new Error(
            `the service ended (${code ?? signal}) before listening; its stderr ends:\n${service.stderrTail()}`,
          ),
        ),
      ),
    );
    check();
  });
}

/** Kills every process of `services` still running (SIGKILL) and waits for each to end; empties the list. */
export async function killAll(services: ServiceProcess[]): Promise<void> {
  for (const service of services.splice(0)) {
    if (service.child.exitCode === null && service.child.signalCode === null) {
      service.child.kill('SIGKILL');
      await service.exited;
    }
  }
}
