/**
 * Runs the benchmarks: every bench/<name>.ts in turn, each as a process of its own, or only
 * the ones named. Other arguments (`--quick`, `--pairs 6`, ...) go to every benchmark.
 *
 *   npm run bench                       # build, then every benchmark
 *   npm run bench -- isolation          # build, then one
 *   npm run bench -- --quick            # a few seconds each: do they still run? (CI)
 *
 * Each benchmark runs in a process group of its own, so whatever it started can be stopped
 * with it: when it ends, anything of its group still there is killed and the benchmark counts
 * as failed; on SIGINT/SIGTERM or past the whole run's budget the group gets SIGTERM, then
 * SIGKILL. Exits 1 if any benchmark failed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as wait } from 'node:timers/promises';
import { isStopping, onCleanup, ROOT, runMain, SWC_REGISTER } from './support/processes';
import { printTable } from './support/report';

/**
 * Every benchmark of a full run together (the build comes before, in about 10 s): about 9 min
 * since the adaptive-lanes and LLM routing benchmarks joined, with room for a loaded machine.
 */
const RUN_BUDGET_MS = 900_000;
const STOP_GRACE_MS = 8_000;

type Outcome = {
  benchmark: string;
  result: string;
  seconds: string;
};

function available(): string[] {
  return readdirSync(__dirname)
    .filter((file) => file.endsWith('.ts') && file !== 'run.ts' && !file.endsWith('.d.ts'))
    .map((file) => file.slice(0, -'.ts'.length))
    .sort();
}

/** Names of benchmarks to run, and the arguments passed on to each. */
function parseArguments(args: string[], known: string[]): { names: string[]; passOn: string[] } {
  const names: string[] = [];
  const passOn: string[] = [];
  args.forEach((arg, i) => {
    if (known.includes(arg)) names.push(arg);
    else if (arg.startsWith('-') || (i > 0 && args[i - 1]!.startsWith('--') && !known.includes(args[i - 1]!))) {
      passOn.push(arg);
    } else {
      throw new Error(`unknown benchmark '${arg}'; there are: ${known.join(', ')}`);
    }
  });
  return { names: names.length > 0 ? names : known, passOn };
}

/** Is any process of the group `pgid` still there? */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // Already gone.
  }
}

async function stopGroup(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  const pgid = child.pid!;
  signalGroup(pgid, 'SIGTERM');
  await Promise.race([exited, wait(STOP_GRACE_MS)]);
  signalGroup(pgid, 'SIGKILL');
}

/** Runs one benchmark; resolves with how it ended. Never rejects. */
async function runOne(name: string, passOn: string[], deadline: number): Promise<string> {
  const child = spawn(process.execPath, ['-r', SWC_REGISTER, resolve(__dirname, `${name}.ts`), ...passOn], {
    cwd: ROOT,
    stdio: 'inherit',
    detached: true,
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((done) => {
    child.once('exit', (code, signal) => done({ code, signal }));
    child.once('error', (error) => done({ code: null, signal: null, error }));
  });
  const forget = onCleanup(() => stopGroup(child, exited));
  let timedOut = false;
  const timer = setTimeout(
    () => {
      timedOut = true;
      process.stderr.write(`\nbench: ${name} ran past the whole run's budget; stopping it\n`);
      void stopGroup(child, exited);
    },
    Math.max(0, deadline - performance.now()),
  );
  const { code, signal, error } = await exited;
  clearTimeout(timer);
  forget();
  if (error) return `failed to start: ${error.message}`;

  let leftBehind = false;
  if (child.pid !== undefined) {
    const until = performance.now() + 1_000;
    while (groupAlive(child.pid) && performance.now() < until) await wait(50);
    leftBehind = groupAlive(child.pid);
    if (leftBehind) signalGroup(child.pid, 'SIGKILL');
  }
  if (timedOut) return 'FAILED: over the budget';
  if (code !== 0) return `FAILED: exit ${code ?? signal}`;
  if (leftBehind) return 'FAILED: left processes behind';
  return 'ok';
}

async function main(names: string[], passOn: string[]): Promise<void> {
  const deadline = performance.now() + RUN_BUDGET_MS;
  const outcomes: Outcome[] = [];
  for (const name of names) {
    if (isStopping()) break;
    const started = performance.now();
    let result: string;
    if (started >= deadline) result = 'FAILED: not run, the budget was spent';
    else {
      process.stdout.write(`\n=== ${name}${passOn.length ? ` ${passOn.join(' ')}` : ''}\n`);
      result = await runOne(name, passOn, deadline);
    }
    outcomes.push({ benchmark: name, result, seconds: ((performance.now() - started) / 1_000).toFixed(1) });
  }
  printTable('benchmarks', outcomes);
  if (outcomes.some((outcome) => outcome.result !== 'ok')) process.exitCode = 1;
}

let parsed: { names: string[]; passOn: string[] } | undefined;
try {
  parsed = parseArguments(process.argv.slice(2), available());
} catch (error) {
  process.stderr.write(`bench: ${(error as Error).message}\n`);
  process.exitCode = 2;
}
if (parsed) {
  const { names, passOn } = parsed;
  runMain('bench', () => main(names, passOn), { budgetMs: RUN_BUDGET_MS + 2 * STOP_GRACE_MS });
}
