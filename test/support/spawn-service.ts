import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { eventually } from './eventually';

const ROOT = resolve(__dirname, '../..');

export interface ServiceProcess {
  child: ChildProcess;
  /** Everything the process wrote so far. */
  output(): string;
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
    env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.on('exit', (code, signal) => done({ code, signal })),
  );
  return { child, output: () => output, exited };
}

/** Waits for the `listening on http://127.0.0.1:<port>` line; fails if the process ends first. */
export function listeningPort(service: ServiceProcess): Promise<number> {
  return Promise.race([
    eventually(() => {
      const match = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(service.output());
      if (!match) throw new Error(`not listening yet:\n${service.output()}`);
      return Number(match[1]);
    }, 15_000),
    service.exited.then(({ code, signal }) => {
      throw new Error(`the service ended (${code ?? signal}) before listening:\n${service.output()}`);
    }),
  ]);
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
