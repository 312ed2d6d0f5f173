/**
 * Logging cost (issue 14, item 1): what the call log costs a call, in the service as it runs.
 *
 *   npm run bench -- logging [options]
 *
 * Options:
 *   --pairs N        rounds, each one run of every side of both workloads (default 4, at least 4)
 *   --duration S     seconds per measured run (default 2)
 *   --connections N  autocannon connections (default 32)
 *   --quick          1 round of 0.5 s: does it still run? (no results written)
 *
 * Three services, `node dist/main.js` each in a process of its own, the same config but
 * `server.logLevel`: `error` (no call line is written: the baseline, "off"), `log` (the
 * default: one line per failed or refused call, none for a success) and `debug` (one line per
 * call). Their stdout goes to a file, as a container runtime takes it (bench/logging/logged-service.ts).
 * The config is the overhead benchmark's full pipeline (API key, containment, rate limit,
 * budget, lane, breaker, ledger) with two tools: `echo`, and `held`, an echo whose breaker an
 * operator holds open (POST /v1/admin/circuits/held/open), so that every call of it is refused
 * `circuit_open` after the rate limit and the budget, with a line at `log` (info).
 *
 * Two workloads, each a ratio of a side to `off` measured in the same round:
 *   1. successes (POST echo, 200): `log` / `off` (no line written: what subscribing costs a
 *      success; 1.00 is the goal) and `debug` / `off` (a line per call);
 *   2. refusals (POST held, 503): `log` / `off` (a line per call).
 * Figures: answers/s, the service's CPU µs per answer (from /proc, whatever the bottleneck),
 * p50/p99 of the successes, and the bytes of log per call. Every process is on loopback; the
 * load is autocannon, `connections` connections with one request in flight each. Then, in this
 * process, the call log alone (bench/logging/line-cost.ts): ns per call of a success at `log`
 * and of a written line, to a file written asynchronously as stdout is, and synchronously.
 *
 * Prints tables and writes bench/results/logging.json. Exits 1 if a check fails: an answer
 * other than the workload's, or a log that does not hold one call line per call it should
 * (none at `off`, one per refusal at `log`, one per call at `debug`), or any line that is not
 * JSON. About 60 s; bounded at 120 s.
 */
import { cpus, loadavg } from 'node:os';
import { measureLineCost } from './logging/line-cost';
import { startLoggedService, type LoggedService } from './logging/logged-service';
import { runLoad, type LoadResult } from './support/load';
import { runOptions } from './support/options';
import { call } from './support/service';
import { runMain } from './support/processes';
import { fixed, printTable, range, writeResultsUnlessQuick } from './support/report';
import { apiKey } from './support/service';
import { median, pairedRatio, summary } from './support/stats';

const BUDGET_MS = 120_000;
const BODY = JSON.stringify({ arguments: {} });
const WARM_UP_S = 0.6;
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const LANE = 'tools';
const COST_USD = 0.000001;

type Side = 'off' | 'log' | 'debug';
type Workload = 'successes' | 'refusals';

const LEVEL: Record<Side, string> = { off: 'error', log: 'log', debug: 'debug' };
const WORKLOADS: Record<Workload, { path: string; status: number; sides: Side[] }> = {
  successes: { path: '/v1/tools/echo/invoke', status: 200, sides: ['off', 'log', 'debug'] },
  refusals: { path: '/v1/tools/held/invoke', status: 503, sides: ['off', 'log'] },
};

interface Run {
  workload: Workload;
  side: Side;
  round: number;
  answersPerS: number;
  cpuUsPerAnswer: number;
  logBytesPerAnswer: number;
  p50Ms: number;
  p99Ms: number;
  answered: number;
  unexpected: number;
}

function config(keys: ReturnType<typeof apiKey>[], side: Side) {
  const tool = { kind: 'builtin', builtin: 'echo', lane: LANE, costUsd: COST_USD, tokens: 1 };
  return {
    server: { host: '127.0.0.1', shutdownDrainMs: 1_000, logLevel: LEVEL[side] },
    auth: { allowAnonymous: false, apiKeys: keys.map((key) => key.entry), adminToken: ADMIN_TOKEN },
    lanes: { [LANE]: { concurrency: 64, queueCapacity: 64 } },
    tools: { echo: tool, held: tool },
    // Far above what a run can use: every call is decided, none refused by them.
    rateLimits: { default: { rpm: 10_000_000, tpm: 1_000_000_000 } },
    budgets: { defaultUsd: 1_000 },
  };
}

async function main(): Promise<void> {
  const s = runOptions({ connections: 32, durationS: 2 });
  const key = apiKey('agent');
  // The warm-up's calls come from a tenant of their own, so that its lines, which the service may
  // still hold back when the rounds begin, are never counted as the rounds'.
  const warmUpKey = apiKey('warm-up');
  const problems: string[] = [];

  const services = Object.fromEntries(
    await Promise.all(
      (['off', 'log', 'debug'] as Side[]).map(async (side) => [
        side,
        await startLoggedService(`service (logLevel ${LEVEL[side]})`, config([key, warmUpKey], side)),
      ]),
    ),
  ) as Record<Side, LoggedService>;
  for (const service of Object.values(services)) {
    const held = await call(service.url('/v1/admin/circuits/held/open'), {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    if (held.status !== 200) throw new Error(`${service.name}: holding the circuit open answered ${held.status}`);
  }
  const startupLines = Object.fromEntries(
    Object.entries(services).map(([side, service]) => [side, service.logLines().length]),
  ) as Record<Side, number>;

  process.stdout.write(
    `logging: ${s.pairs} rounds of ${s.durationS} s runs, ${s.connections} connections; ` +
      `each round: successes on (off, log, debug), refusals on (off, log)\n` +
      `node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()
        .map((load) => load.toFixed(2))
        .join(' ')}\n`,
  );

  const load = (service: LoggedService, workload: Workload, durationS: number, as = key): Promise<LoadResult> =>
    runLoad({
      url: service.url(WORKLOADS[workload].path),
      connections: s.connections,
      durationS,
      headers: as.headers,
      body: BODY,
    });

  const measure = async (workload: Workload, side: Side, round: number): Promise<Run> => {
    const service = services[side];
    const cpuBefore = service.cpuSeconds();
    const bytesBefore = service.logBytes();
    const result = await load(service, workload, s.durationS);
    const cpuUsed = service.cpuSeconds() - cpuBefore;
    const answered = Object.values(result.statuses).reduce((sum, count) => sum + count, 0);
    const expected = result.statuses[WORKLOADS[workload].status] ?? 0;
    const run: Run = {
      workload,
      side,
      round,
      answersPerS: answered / result.durationS,
      cpuUsPerAnswer: (cpuUsed * 1e6) / answered,
      logBytesPerAnswer: (service.logBytes() - bytesBefore) / answered,
      p50Ms: result.p50Ms,
      p99Ms: result.p99Ms,
      answered,
      unexpected: answered - expected + result.errors,
    };
    if (expected === 0 || run.unexpected > 0) {
      problems.push(
        `${workload} on ${side}, round ${round}: ${expected} answered ${WORKLOADS[workload].status}, ` +
          `${JSON.stringify(result.statuses)}, ${result.errors} errors`,
      );
    }
    process.stdout.write(
      `  round ${round} ${workload.padEnd(9)} ${side.padEnd(5)}: ${fixed(run.answersPerS, 0)} answers/s, ` +
        `${fixed(run.cpuUsPerAnswer, 1)} µs CPU/answer, ${fixed(run.logBytesPerAnswer, 1)} log bytes/answer` +
        `${workload === 'successes' ? `, p50 ${fixed(run.p50Ms)} ms, p99 ${fixed(run.p99Ms)} ms` : ''}\n`,
    );
    return run;
  };

  // Warm-up, not measured: every side's paths compiled before the first round.
  for (const workload of Object.keys(WORKLOADS) as Workload[]) {
    for (const side of WORKLOADS[workload].sides)
      await load(services[side], workload, s.quick ? 0.2 : WARM_UP_S, warmUpKey);
  }

  const runs: Run[] = [];
  for (let round = 1; round <= s.pairs; round++) {
    for (const workload of Object.keys(WORKLOADS) as Workload[]) {
      for (const side of WORKLOADS[workload].sides) runs.push(await measure(workload, side, round));
    }
  }

  // The log holds what the level says: nothing of calls at off, a line per refusal at log, a line per
  // call at debug. Read once the services have stopped, when what they held back has been written.
  await Promise.all(Object.values(services).map((service) => service.stop()));
  const sent = (workload: Workload, side: Side) =>
    runs.filter((run) => run.workload === workload && run.side === side).reduce((sum, run) => sum + run.answered, 0);
  const callLines: Record<Side, number> = { off: 0, log: 0, debug: 0 };
  for (const side of Object.keys(services) as Side[]) {
    for (const line of services[side].logLines()) {
      let parsed: { event?: string; tenant?: string };
      try {
        parsed = JSON.parse(line) as { event?: string; tenant?: string };
      } catch {
        problems.push(`${side}: a log line that is not JSON: ${line.slice(0, 200)}`);
        continue;
      }
      if (parsed.event === 'call' && parsed.tenant === key.tenant) callLines[side]++;
    }
  }
  // Calls cut at the end of a run (one per connection at most) were answered and logged all the same.
  const cut = s.connections * s.pairs * Object.keys(WORKLOADS).length;
  const expectLines = (side: Side, least: number) => {
    if (callLines[side] < least || callLines[side] > least + cut) {
      problems.push(`${side}: ${callLines[side]} call lines for ${least} calls that should each have one`);
    }
  };
  expectLines('off', 0);
  expectLines('log', sent('refusals', 'log'));
  expectLines('debug', sent('successes', 'debug'));

  // With the services stopped: nothing else of this benchmark competes for the CPU.
  const lineCost = await measureLineCost(s.quick ? 1 : 5, s.quick ? 30 : 300);

  const of = (workload: Workload, side: Side) => runs.filter((run) => run.workload === workload && run.side === side);
  const compare = (workload: Workload, side: Side) => {
    const base = of(workload, 'off');
    const with_ = of(workload, side);
    return {
      workload,
      side,
      answersPerS: pairedRatio(
        base.map((run) => run.answersPerS),
        with_.map((run) => run.answersPerS),
      ),
      cpuUsPerAnswer: pairedRatio(
        base.map((run) => run.cpuUsPerAnswer),
        with_.map((run) => run.cpuUsPerAnswer),
      ),
      addedCpuUs: median(with_.map((run, i) => run.cpuUsPerAnswer - base[i]!.cpuUsPerAnswer)),
      p99Ms: pairedRatio(
        base.map((run) => run.p99Ms),
        with_.map((run) => run.p99Ms),
      ),
    };
  };
  const comparisons = [compare('successes', 'log'), compare('successes', 'debug'), compare('refusals', 'log')];

  printTable(
    'each side: median (min-max) over the rounds',
    (Object.keys(WORKLOADS) as Workload[]).flatMap((workload) =>
      WORKLOADS[workload].sides.map((side) => {
        const series = of(workload, side);
        return {
          workload,
          side: `${side} (logLevel ${LEVEL[side]})`,
          'answers/s': range(summary(series.map((run) => run.answersPerS)), 0),
          'CPU µs/answer': range(summary(series.map((run) => run.cpuUsPerAnswer)), 1),
          'log bytes/answer': fixed(median(series.map((run) => run.logBytesPerAnswer)), 1),
          'p99 ms': workload === 'successes' ? range(summary(series.map((run) => run.p99Ms))) : '',
        };
      }),
    ),
  );
  printTable(
    'with logs / off, per round: median (min-max)',
    comparisons.map((comparison) => ({
      workload: comparison.workload,
      ratio: `${comparison.side} / off`,
      'answers/s': range(comparison.answersPerS, 3),
      'CPU µs/answer': range(comparison.cpuUsPerAnswer, 3),
      'added CPU µs': fixed(comparison.addedCpuUs, 1),
      'p99 ms': comparison.workload === 'successes' ? range(comparison.p99Ms, 3) : '',
    })),
  );
  printTable(
    'the call log alone, in process: ns per call (median of the rounds)',
    lineCost.map((cost) => ({ case: cost.what, 'ns/call': fixed(cost.nsPerCall, 0) })),
  );
  process.stdout.write(
    `\nlog lines: at start-up ${JSON.stringify(startupLines)}; call lines during the rounds ${JSON.stringify(callLines)}\n` +
      `checks: ${problems.length === 0 ? 'all passed' : problems.join('; ')}\n`,
  );
  writeResultsUnlessQuick('logging', s.quick, {
    settings: { ...s, loadAverageAtStart: loadavg() },
    levels: LEVEL,
    comparisons,
    lineCost,
    startupLines,
    callLines,
    checks: { problems },
    runs,
  });
  if (problems.length > 0) process.exitCode = 1;
}

runMain('logging', main, { budgetMs: BUDGET_MS });
