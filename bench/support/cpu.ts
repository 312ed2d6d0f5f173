/**
 * CPU time of processes: this one (process.cpuUsage) and others by pid, from /proc (Linux;
 * NaN elsewhere). CPU per call does not depend on which process was the bottleneck on two
 * shared cores, so the benchmarks report it beside throughput.
 */
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';
import { readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/** CPU seconds (user + system) the process `pid` has used so far; NaN if it cannot be read. */
export function cpuSecondsOf(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name in parentheses: state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
  } catch {
    return Number.NaN;
  }
}

/** CPU seconds this process has used so far. */
export function ownCpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

/**
 * Pins each process (every thread of it) to one CPU with `taskset`: `cpuOf` maps pids to CPU
 * numbers. Answers what was done, or why nothing was (fewer than two CPUs, no taskset): the
 * benchmark runs unpinned then, and says so.
 */
export function pinToCpus(cpuOf: ReadonlyArray<[pid: number | undefined, cpu: number]>): string {
  if (cpus().length < 2) return 'not pinned: fewer than 2 CPUs';
  try {
    for (const [pid, cpu] of cpuOf) {
      if (pid !== undefined) execFileSync('taskset', ['-acp', String(cpu), String(pid)], { stdio: 'ignore' });
    }
    return 'pinned';
  } catch (error) {
    return `not pinned: taskset failed (${(error as Error).message.split('\n')[0]})`;
  }
}
