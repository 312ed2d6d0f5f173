/**
 * Adaptive lanes (issue 27): a dependency whose latency rises five-fold under load, behind a
 * lane with an adaptive limit, a fixed limit too high, or a fixed limit too low. What the busy
 * lane gets done, and what the lane beside it, calling the same dependency, waits.
 *
 *   npm run bench -- adaptive-lanes [options]
 *
 * Options:
 *   --pairs N      rounds, each running every configuration once, in turn (default 2; --quick 1)
 *   --duration S   seconds per measured phase (default 3)
 *   --quick        phases of 0.5 s: does it still run? (no results written)
 *
 * Processes, all on loopback: the dependency (bench/adaptive-lanes/dependency-server.ts: 8
 * requests served at once for 20 ms each, the rest queued there, FIFO), the service, a process
 * of 64 closed-loop callers of the busy tool (a refused caller waits 50 ms), and this one:
 * autocannon, 4 connections on the neighbouring tool. Both tools call the same dependency;
 * the busy one (`bulk`, 1 s attempt timeout, no retry) in the lane under test, the
 * neighbouring one (`lookup`) in a fixed lane of its own (C 4, Q 4).
 *
 * The lane under test, one configuration per service:
 *   gradient2: adaptive, from 16 (Q 16), within 1..64, every other setting its default
 *   vegas:     the same with vegas
 *   too high:  fixed C 64, Q 64: more than the dependency serves at once, so the rest queue there
 *   too low:   fixed C 2, Q 2: a quarter of what it serves at once
 * Each: a warm-up (the adaptive limits find their level), phase `normal` (measured), then the
 * dependency slows five-fold and phase `slowed` is measured at once, the lane's reaction
 * included. Figures per phase: the busy tool's goodput (200 answers a second; its timeouts and
 * refusals beside), the neighbouring tool's p50/p99 and answers a second, the lane's limit
 * (lowest and highest, sampled every 100 ms), the dependency's longest queue.
 *
 * Prints tables and writes bench/results/adaptive-lanes.json. Exits 1 if a check fails: a
 * neighbouring call that did not answer 200, or a phase in which the busy tool got nothing
 * done. About 2 min; bounded at 300 s.
 */
import { cpus, loadavg } from 'node:os';
import { type CallersStats, runLoad, startCallersProcess } from './support/load';
import { runMain } from './support/processes';
import { fixed, printTable, range, writeResultsUnlessQuick } from './support/report';
import { apiKey, type ApiKey, startService } from './support/service';
import { summary } from './support/stats';
import { option } from './support/options';
import { type Dependency, SERVICE_MS, startDependency, WORKERS } from './adaptive-lanes/dependency-server';

const BUDGET_MS = 300_000;
const BUSY_CALLERS = 64;
const REFUSED_WAIT_MS = 50;
const NEIGHBOUR_CONNECTIONS = 4;
const SLOWDOWN = 5;
const BODY = JSON.stringify({ arguments: {} });

const CONFIGURATIONS = {
  gradient2: { concurrency: 16, queueCapacity: 16, adaptive: { algorithm: 'gradient2', min: 1, max: 64 } },
  vegas: { concurrency: 16, queueCapacity: 16, adaptive: { algorithm: 'vegas', min: 1, max: 64 } },
  'too high': { concurrency: 64, queueCapacity: 64 },
  'too low': { concurrency: 2, queueCapacity: 2 },
} as const;
type Configuration = keyof typeof CONFIGURATIONS;
type Phase = 'normal' | 'slowed';

interface PhaseRun {
  configuration: Configuration;
  phase: Phase;
  round: number;
  goodputPerS: number;
  timeoutsPerS: number;
  refusedPerS: number;
  neighbourP50Ms: number;
  neighbourP99Ms: number;
  neighbourPerS: number;
  neighbourFailures: number;
  lowestLimit: number;
  highestLimit: number;
  peakQueuedAtDependency: number;
}

function config(dependency: Dependency, key: ApiKey, configuration: Configuration) {
  const http = (lane: string, timeoutMs: number) => ({
    lane,
    kind: 'http',
    url: dependency.url('/work'),
    timeoutMs,
    retry: { maxAttempts: 1 },
  });
  return {
    auth: { allowAnonymous: false, apiKeys: [key.entry] },
    containment: {
      egress: { allowHosts: ['127.0.0.1'], allowPrivateCidrs: ['127.0.0.0/8'] },
      pools: { normalMaxConcurrency: 256 },
    },
    lanes: { busy: CONFIGURATIONS[configuration], neighbour: { concurrency: 4, queueCapacity: 4 } },
    tools: { bulk: http('busy', 1_000), lookup: http('neighbour', 10_000) },
    rateLimits: { default: { rpm: 10_000_000 } },
  };
}

const count = (stats: CallersStats, status: string) => stats.answered[status] ?? 0;

async function runConfiguration(
  configuration: Configuration,
  round: number,
  durationS: number,
  warmUpS: number,
): Promise<PhaseRun[]> {
  const key = apiKey('agent');
  const dependency = await startDependency();
  const service = await startService(config(dependency, key, configuration), { name: `service (${configuration})` });
  const callers = await startCallersProcess();
  const probe = await service.call('/v1/tools/lookup/invoke', { method: 'POST', headers: key.headers, body: BODY });
  if (probe.status !== 200) throw new Error(`the neighbouring tool answered ${probe.status}: ${probe.text}`);
  try {
    await callers.start({
      url: service.url('/v1/tools/bulk/invoke'),
      headers: key.headers,
      body: BODY,
      callers: BUSY_CALLERS,
      pauseAfterRefusal: { fixedMs: REFUSED_WAIT_MS },
      keepAlive: true,
    });
    await new Promise((done) => setTimeout(done, warmUpS * 1_000));
    const runs: PhaseRun[] = [];
    for (const phase of ['normal', 'slowed'] as Phase[]) {
      if (phase === 'slowed') await dependency.slowdown(SLOWDOWN);
      const limits: number[] = [];
      const sampling = setInterval(() => {
        service.lanes(key.headers).then(
          ({ busy }) => limits.push(busy!.limit ?? busy!.concurrency),
          () => undefined,
        );
      }, 100);
      const before = await callers.stats();
      await dependency.stats(true);
      const neighbour = await runLoad({
        url: service.url('/v1/tools/lookup/invoke'),
        connections: NEIGHBOUR_CONNECTIONS,
        durationS,
        headers: key.headers,
        body: BODY,
      });
      clearInterval(sampling);
      const after = await callers.stats();
      const lane = (await service.lanes(key.headers)).busy!;
      limits.push(lane.limit ?? lane.concurrency);
      const delta = (status: string) => (count(after, status) - count(before, status)) / neighbour.durationS;
      runs.push({
        configuration,
        phase,
        round,
        goodputPerS: delta('200'),
        timeoutsPerS: delta('504'),
        refusedPerS: delta('503'),
        neighbourP50Ms: neighbour.p50Ms,
        neighbourP99Ms: neighbour.p99Ms,
        neighbourPerS: neighbour.reqPerS,
        neighbourFailures: neighbour.non2xx + neighbour.errors,
        lowestLimit: Math.min(...limits),
        highestLimit: Math.max(...limits),
        peakQueuedAtDependency: (await dependency.stats()).peakQueued,
      });
    }
    return runs;
  } finally {
    await callers.stop().catch(() => undefined);
    await callers.close();
    await service.stop();
    await dependency.stop();
  }
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const rounds = quick ? 1 : option('pairs', 2, 1);
  const durationS = quick ? 0.5 : option('duration', 3, 1);
  const warmUpS = quick ? 0.5 : 2;
  process.stdout.write(
    `adaptive-lanes: ${rounds} round(s); a dependency serving ${WORKERS} at once for ${SERVICE_MS} ms, then ${SLOWDOWN}× slower; ` +
      `${BUSY_CALLERS} callers of the busy tool, ${NEIGHBOUR_CONNECTIONS} connections on its neighbour; phases of ${durationS} s\n` +
      `node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()
        .map((load) => load.toFixed(2))
        .join(' ')}\n`,
  );

  const runs: PhaseRun[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const configuration of Object.keys(CONFIGURATIONS) as Configuration[]) {
      const measured = await runConfiguration(configuration, round, durationS, warmUpS);
      for (const run of measured) {
        process.stdout.write(
          `  round ${round} ${configuration.padEnd(9)} ${run.phase.padEnd(6)}: goodput ${fixed(run.goodputPerS, 0)}/s, ` +
            `neighbour p99 ${fixed(run.neighbourP99Ms)} ms, limit ${run.lowestLimit}-${run.highestLimit}\n`,
        );
      }
      runs.push(...measured);
    }
  }

  const of = (configuration: Configuration, phase: Phase) =>
    runs.filter((run) => run.configuration === configuration && run.phase === phase);
  printTable(
    'per configuration and phase: median (min-max) over the rounds',
    (Object.keys(CONFIGURATIONS) as Configuration[]).flatMap((configuration) =>
      (['normal', 'slowed'] as Phase[]).map((phase) => {
        const series = of(configuration, phase);
        const stat = (read: (run: PhaseRun) => number, digits = 1) => range(summary(series.map(read)), digits);
        return {
          lane: configuration,
          phase,
          'goodput /s': stat((run) => run.goodputPerS, 0),
          'timeouts /s': stat((run) => run.timeoutsPerS, 0),
          'refused /s': stat((run) => run.refusedPerS, 0),
          'neighbour p50 ms': stat((run) => run.neighbourP50Ms),
          'neighbour p99 ms': stat((run) => run.neighbourP99Ms),
          'neighbour /s': stat((run) => run.neighbourPerS, 0),
          'lowest limit': stat((run) => run.lowestLimit, 0),
          'highest limit': stat((run) => run.highestLimit, 0),
          'queue at dependency': stat((run) => run.peakQueuedAtDependency, 0),
        };
      }),
    ),
  );

  const problems: string[] = [];
  for (const run of runs) {
    const where = `${run.configuration}, ${run.phase}, round ${run.round}`;
    if (run.neighbourFailures > 0) problems.push(`${where}: ${run.neighbourFailures} neighbouring calls failed`);
    if (run.goodputPerS === 0) problems.push(`${where}: the busy tool got nothing done`);
  }
  process.stdout.write(`checks: ${problems.length === 0 ? 'all passed' : problems.join('; ')}\n`);
  writeResultsUnlessQuick('adaptive-lanes', quick, {
    settings: { rounds, durationS, warmUpS, loadAverageAtStart: loadavg() },
    configurations: CONFIGURATIONS,
    runs,
  });
  if (problems.length > 0) process.exitCode = 1;
}

runMain('adaptive-lanes', main, { budgetMs: BUDGET_MS });
