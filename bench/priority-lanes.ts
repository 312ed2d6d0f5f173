/**
 * Priority classes in a lane (issue 44): a full lane under a mixed load, with classes against the
 * same lane where every call is `standard`. What the critical calls wait, against the sheddable
 * ones beside them, and how many of each the lane served or refused.
 *
 *   npm run bench -- priority-lanes [options]
 *
 * Options:
 *   --pairs N      rounds, each running both lanes in turn (default 3; --quick 1)
 *   --duration S   seconds of arrivals per run (default 2; --quick 0.3)
 *
 * In this process, no HTTP: the real `Lane` (src/bulkhead/lane.ts, as built in dist/) on the real clock, C 4, Q 32,
 * tasks that hold their slot 5 ms (a timer), so it serves about 800 calls a second. Open-loop
 * arrivals, one every 0.5 ms (2,000 a second, 2.5 times what it serves): one in five critical (400
 * a second, half of what the lane serves), the rest sheddable. `classes`: each call has its class; `no classes`: every call is `standard`, as
 * before issue 44. Figures per class: calls served and refused (a full queue, or displaced while
 * waiting), the wait of the served ones (p50, p99, ms), and critical p99 wait / sheddable p99
 * wait. The target: with classes, the critical calls' wait at most 0.2 times the
 * sheddable ones'. Prints tables and writes bench/results/priority-lanes.json. Exits 1 if a
 * check fails: a call answered twice or never, or the lane over its bounds. About 15 s.
 */
import { loadavg } from 'node:os';
import { setTimeout as wait } from 'node:timers/promises';
import type { PriorityClass } from '../src/bulkhead';
import { built } from './support/built';
import { runMain } from './support/processes';
import { fixed, printTable, writeResultsUnlessQuick } from './support/report';
import { percentile, summary } from './support/stats';

// The lane as it ships (dist/), not src/ through swc: an object's shape is part of what is measured.
const { Lane } = built<typeof import('../src/bulkhead')>('bulkhead');
const { isResilienceError, SystemClock } = built<typeof import('../src/common')>('common');

const CONCURRENCY = 4;
const QUEUE = 32;
const HOLD_MS = 5;
const ARRIVAL_EVERY_MS = 0.5;
/** One arrival in five is critical: 400 a second, half of what the lane serves; the rest a flood. */
const CRITICAL_ONE_IN = 5;
const BUDGET_MS = 120_000;

type Setup = 'classes' | 'no classes';

interface ClassFigures {
  served: number;
  refused: number;
  waitsMs: number[];
}

interface Run {
  setup: Setup;
  byClass: Record<'critical' | 'sheddable', ClassFigures>;
  problems: string[];
}

/** One run: arrivals for `durationMs`, then every call answered. */
async function runOnce(setup: Setup, durationMs: number): Promise<Run> {
  const clock = new SystemClock();
  const lane = new Lane({ name: 'bench', concurrency: CONCURRENCY, queueCapacity: QUEUE, clock });
  const byClass: Run['byClass'] = {
    critical: { served: 0, refused: 0, waitsMs: [] },
    sheddable: { served: 0, refused: 0, waitsMs: [] },
  };
  const problems: string[] = [];
  const answers: Array<Promise<void>> = [];
  /** How many times each admitted call was answered: once, always. */
  const answeredTimes: number[] = [];
  const started = performance.now();
  let n = 0;
  while (performance.now() - started < durationMs) {
    // Arrivals catch up with the clock in bursts: a timer can fire late, the rate holds.
    const due = Math.floor((performance.now() - started) / ARRIVAL_EVERY_MS);
    for (; n < due; n++) {
      const kind = n % CRITICAL_ONE_IN === 0 ? 'critical' : 'sheddable';
      const priority: PriorityClass = setup === 'classes' ? kind : 'standard';
      const arrived = performance.now();
      let startedAt = 0;
      const task = async () => {
        startedAt = performance.now();
        await wait(HOLD_MS);
      };
      const result = lane.run(task, { tenant: `t${n % 8}`, priority });
      if (typeof result === 'string') {
        byClass[kind].refused++;
        continue;
      }
      const call = answeredTimes.push(0) - 1;
      answers.push(
        result.then(
          () => {
            answeredTimes[call]++;
            byClass[kind].served++;
            byClass[kind].waitsMs.push(startedAt - arrived);
          },
          (error: unknown) => {
            answeredTimes[call]++;
            if (isResilienceError(error) && error.kind === 'queue_full') byClass[kind].refused++;
            else problems.push(`call ${n}: ${String(error)}`);
          },
        ),
      );
      const { active, waiting } = lane.snapshot();
      if (active > CONCURRENCY || waiting > QUEUE) problems.push(`lane over its bounds: ${active}/${waiting}`);
    }
    await wait(1);
  }
  await Promise.all(answers);
  await lane.whenIdle();
  answeredTimes.forEach((times, call) => {
    if (times !== 1) problems.push(`admitted call ${call} answered ${times} times`);
  });
  return { setup, byClass, problems };
}

function p(values: number[], q: number): number {
  return values.length === 0
    ? Number.NaN
    : percentile(
        [...values].sort((a, b) => a - b),
        q,
      );
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const option = (name: string, fallback: number) => {
    const at = process.argv.indexOf(`--${name}`);
    return at === -1 ? fallback : Number(process.argv[at + 1]);
  };
  const pairs = quick ? 1 : option('pairs', 3);
  const durationMs = (quick ? 0.3 : option('duration', 2)) * 1_000;
  const load = loadavg()[0];
  const runs: Run[] = [];
  for (let pair = 0; pair < pairs; pair++) {
    for (const setup of ['classes', 'no classes'] as const) runs.push(await runOnce(setup, durationMs));
  }
  const rows = runs.map((run) => {
    const { critical, sheddable } = run.byClass;
    return {
      setup: run.setup,
      'critical served/refused': `${critical.served}/${critical.refused}`,
      'sheddable served/refused': `${sheddable.served}/${sheddable.refused}`,
      'critical wait p50/p99 ms': `${fixed(p(critical.waitsMs, 50), 1)}/${fixed(p(critical.waitsMs, 99), 1)}`,
      'sheddable wait p50/p99 ms': `${fixed(p(sheddable.waitsMs, 50), 1)}/${fixed(p(sheddable.waitsMs, 99), 1)}`,
      'critical / sheddable p99 wait': fixed(p(critical.waitsMs, 99) / p(sheddable.waitsMs, 99), 2),
    };
  });
  printTable(
    `a full lane (C ${CONCURRENCY}, Q ${QUEUE}, ${HOLD_MS} ms a call) under 2.5x its capacity, one call in five critical, the rest sheddable (load average ${fixed(load, 1)})`,
    rows,
  );
  const ratios = runs
    .filter((run) => run.setup === 'classes')
    .map((run) => p(run.byClass.critical.waitsMs, 99) / p(run.byClass.sheddable.waitsMs, 99));
  const target = summary(ratios);
  console.log(
    `\n  with classes, critical p99 wait / sheddable p99 wait: ${fixed(target.median, 2)} (${fixed(target.min, 2)}-${fixed(target.max, 2)}); target <= 0.2: ${target.median <= 0.2 ? 'met' : 'not met'}`,
  );
  const problems = runs.flatMap((run) => run.problems);
  for (const problem of problems.slice(0, 10)) console.log(`  CHECK FAILED: ${problem}`);
  console.log(problems.length === 0 ? '\nchecks: all passed' : `\nchecks: ${problems.length} failed`);
  writeResultsUnlessQuick('priority-lanes', quick, { loadAverage: load, runs: rows, criticalOverSheddableP99: target });
  if (problems.length > 0) process.exitCode = 1;
}

runMain('priority-lanes', main, { budgetMs: BUDGET_MS });
