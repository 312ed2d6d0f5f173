import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';

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
 */
export function spawnService(env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, ['-r', resolve(__dirname, 'swc-register.js'), resolve(ROOT, 'src/main.ts')], {
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
