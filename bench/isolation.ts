/**
 * Isolation, the headline benchmark (issue 6, item 1): does a saturated slow lane slow the
 * calls of another lane? And what would one shared limiter have done instead?
 *
 *   npm run bench -- isolation [options]
 *
 * Options:
 *   --pairs N        A/B pairs with lanes, alternated A B A B ... (default 4, at least 4); the
 *                    shared-lane contrast runs 2
 *   --duration S     seconds per measured run (default 3)
 *   --connections N  autocannon connections calling the fast tool (default 16)
 *   --slow-ms N      how long the slow upstream takes to answer: N ms ± 50 % (default 2000)
 *   --retry-ms N     how long a refused slow caller waits before calling again (default 100)
 *   --quick          1 pair of 0.5 s per configuration: does it still run? (no results written)
 *
 * Processes, all on loopback: an upstream (`/fast` answers at once, `/slow?ms=N` after N ms),
 * the service (`node dist/main.js`), a process of closed-loop callers of the slow tool, and
 * this one, the load generator: autocannon calling the fast tool.
 *
 * Two configurations in one service, measured one after the other:
 *   lanes:  tool `slow` in lane `slow` (C = 8, Q = 16), tool `fast` in lane `fast` (C = 16, Q = 64);
 *   shared: the same two http tools in ONE lane `shared` (C = 8 + 16, Q = 16 + 64): what a
 *           single global limiter (p-limit, one semaphore around every tool call) gives.
 * Phase A: the fast tool alone. Phase B: the same while C + Q + 16 callers (keep-alive
 * connections) keep calling the slow tool: C calls running at the upstream, Q waiting, and the
 * other 16 refused `queue_full` over and over (each waits --retry-ms after a refusal: a steady
 * overflow of about 150 refusals a second, ten times what Retry-After asks for). Before each
 * B run the bench waits until the slow tool's lane is full; it samples the lanes every 100 ms
 * during every run and checks the slow upstream never held more than the lane's C. One tenant
 * makes every call, so the shared lane is a plain FIFO, as p-limit is.
 *
 * Figures: the fast tool's p50, p99 (of 2xx answers, each response's own time) and 2xx/s;
 * B/A per pair (median, min-max) and of the medians. Target: B/A of p99 <= 1.2 with lanes.
 * Calls still waiting when a run ends are not counted, which flatters the shared lane. The
 * CPU each process used during each run (service, this load generator, upstream, callers)
 * says where the machine's two cores went. Last, the cost of a refusal: the slow lane full
 * and autocannon on the slow tool for 2 s, the service's CPU per refusal next to its CPU per
 * fast call in phase A.
 *
 * Prints tables and writes bench/results/isolation.json. Exits 1 if a check fails (a fast call
 * failed with lanes, the slow lane was not kept full or ran more than C at once, a call of the
 * full lane was not refused). About 50 s; bounded at 110 s (more with more pairs or longer runs).
 */
import { cpus, loadavg } from 'node:os';
import { alternate, type CallersProcess, type CallersStats, runLoad, startCallersProcess } from './support/load';
import { pinToCpus } from './support/cpu';
import { runMain } from './support/processes';
import { sampleLanes } from './isolation/lane-samples';
import {
  config,
  CONFIGURATIONS,
  type Configuration,
  FAST,
  SLOW,
  SLOW_CALLERS,
  TARGET_P99_RATIO,
} from './isolation/setup';
import { check, cores, type Cpu, cpuText, PROCESSES, row, type Run, summarise } from './isolation/summary';
import { fixed, printTable, range, writeResults } from './support/report';
import { apiKey, startService, waitUntil } from './support/service';
import { median } from './support/stats';
import { startUpstream } from './support/upstream-server';
import { option, runOptions } from './support/options';

/** Pairs of the shared-lane contrast (fewer if --pairs asks for fewer). */
const SHARED_PAIRS = 2;
/** The whole run with the default settings, start-up to clean-up; more pairs or longer runs get more. */
const BUDGET_MS = 110_000;
interface Settings {
  pairs: number;
  durationS: number;
  connections: number;
  slowMs: number;
  retryMs: number;
  quick: boolean;
}

function settings(): Settings {
  return {
    ...runOptions({ connections: 16 }),
    // --quick: slow calls short enough that filling and emptying the slow lane takes little time.
    slowMs: option('slow-ms', process.argv.includes('--quick') ? 500 : 2_000, 500),
    retryMs: option('retry-ms', 100, 0),
  };
}

const refused = (stats: CallersStats) => stats.answered['503'] ?? 0;
const otherAnswers = (stats: CallersStats) =>
  Object.entries(stats.answered).reduce((sum, [status, n]) => sum + (status === '200' || status === '503' ? 0 : n), 0);

async function main(s: Settings): Promise<void> {
  const key = apiKey('agent');
  const upstream = await startUpstream();
  const service = await startService(config(upstream, s.slowMs, key.entry));
  const callers: CallersProcess = await startCallersProcess();
  // The service on a CPU of its own, everything else on the other: what B may cost the fast
  // lane is then the slow lane's work inside the service, not the other processes' CPU.
  const pinning = pinToCpus([
    [service.child.process.pid, 1],
    [process.pid, 0],
    [upstream.child.process.pid, 0],
    [callers.pid, 0],
  ]);
  const body = JSON.stringify({ arguments: {} });
  const invoke = (tool: string) => service.url(`/v1/tools/${tool}/invoke`);

  for (const tool of ['fast', 'shared_fast']) {
    const answer = await service.call(`/v1/tools/${tool}/invoke`, { method: 'POST', headers: key.headers, body });
    if (answer.status !== 200) throw new Error(`probe of ${tool} answered ${answer.status}: ${answer.text}`);
  }

  process.stdout.write(
    `isolation: ${s.pairs} A/B pairs of ${s.durationS} s with lanes, ${Math.min(s.pairs, SHARED_PAIRS)} with the shared lane, ` +
      `${s.connections} connections on the fast tool; ` +
      `B adds ${SLOW_CALLERS} callers of the slow tool (${s.slowMs} ms upstream; lane C ${SLOW.concurrency}, Q ${SLOW.queueCapacity}; ` +
      `refused callers retry after ${s.retryMs} ms)\nnode ${process.version}, ${cpus().length} CPUs, load average ${loadavg()
        .map((load) => load.toFixed(2))
        .join(' ')}; ${pinning === 'pinned' ? 'the service pinned to CPU 1, the other processes to CPU 0' : pinning}\n`,
  );

  const fastLoad = (configuration: Configuration, durationS: number) =>
    runLoad({ url: invoke(configuration.fastTool), connections: s.connections, durationS, headers: key.headers, body });

  const saturate = async (configuration: Configuration) => {
    await callers.start({
      url: invoke(configuration.slowTool),
      headers: key.headers,
      body,
      callers: SLOW_CALLERS,
      pauseAfterRefusal: { fixedMs: s.retryMs },
      keepAlive: true,
    });
    await waitUntil(`lane ${configuration.slowLane} is full of slow calls`, async () => {
      const lane = (await service.lanes(key.headers))[configuration.slowLane]!;
      const stats = await callers.stats();
      return configuration.name === 'lanes'
        ? lane.active === SLOW.concurrency && lane.waiting === SLOW.queueCapacity && refused(stats) > 0
        : lane.active === configuration.slowLaneConcurrency && lane.waiting === SLOW_CALLERS - lane.active;
    });
  };

  /** CPU seconds of every process so far. */
  const cpuNow = async (): Promise<Cpu> => {
    const { user, system } = process.cpuUsage();
    return {
      service: await service.cpuSeconds(),
      loadGenerator: (user + system) / 1e6,
      upstream: (await upstream.stats()).cpuUs / 1e6,
      callers: (await callers.stats()).cpuUs / 1e6,
    };
  };

  const drain = async (configuration: Configuration) => {
    await callers.stop();
    await waitUntil(`lane ${configuration.slowLane} and the slow upstream are empty`, async () => {
      const lane = (await service.lanes(key.headers))[configuration.slowLane]!;
      return lane.active === 0 && lane.waiting === 0 && (await upstream.stats()).slow.inFlight === 0;
    });
  };

  const measure = async (configuration: Configuration, pair: number, phase: 'A' | 'B'): Promise<Run> => {
    if (phase === 'B') await saturate(configuration);
    const cpuBefore = await cpuNow();
    const before = await callers.stats();
    await upstream.stats(true);
    const stopSampling = sampleLanes(service, key.headers, configuration);
    const load = await fastLoad(configuration, s.durationS);
    const lanes = await stopSampling(phase === 'B');
    const cpuAfter = await cpuNow();
    const after = await callers.stats();
    const run: Run = {
      configuration: configuration.name,
      pair,
      phase,
      ...load,
      lanes,
      slowPeakAtUpstream: (await upstream.stats()).slow.peakInFlight,
      cpuCores: cores(cpuBefore, cpuAfter, load.durationS),
    };
    if (phase === 'B') {
      run.slowRefusedPerS = (refused(after) - refused(before)) / load.durationS;
      run.slowOtherAnswers = otherAnswers(after) - otherAnswers(before);
      await drain(configuration);
    }
    process.stdout.write(
      `  ${configuration.name} pair ${pair} ${phase}: p50 ${fixed(run.p50Ms)} ms, p99 ${fixed(run.p99Ms)} ms, ` +
        `${fixed(run.reqPerS, 0)} req/s${run.non2xx + run.errors ? `, ${run.non2xx} non-2xx, ${run.errors} errors` : ''}; ` +
        `slow lane running ${lanes.slowActive.median}, waiting ${lanes.slowWaiting.median}` +
        `${phase === 'B' ? ` (full in ${fixed(lanes.fullShare * 100, 0)} % of samples), refused ${fixed(run.slowRefusedPerS!, 0)}/s` : ''}` +
        `; slow at upstream peak ${run.slowPeakAtUpstream}; CPU cores ${cpuText(run.cpuCores)}\n`,
    );
    return run;
  };

  // Warm-up, not measured: the fast path alone and beside a full slow lane (the refusal path).
  await fastLoad(CONFIGURATIONS[0]!, s.quick ? 0.5 : 1);
  await saturate(CONFIGURATIONS[0]!);
  await fastLoad(CONFIGURATIONS[0]!, s.quick ? 0.5 : 1);
  await drain(CONFIGURATIONS[0]!);
  await fastLoad(CONFIGURATIONS[1]!, s.quick ? 0.5 : 1);

  const series: Array<{ configuration: Configuration['name']; a: Run[]; b: Run[] }> = [];
  for (const configuration of CONFIGURATIONS) {
    const { a, b } = await alternate(
      (pair) => measure(configuration, pair, 'A'),
      (pair) => measure(configuration, pair, 'B'),
      // The shared lane's effect is two orders of magnitude: two pairs show it.
      configuration.name === 'shared' ? Math.min(s.pairs, SHARED_PAIRS) : s.pairs,
    );
    series.push({ configuration: configuration.name, a, b });
  }
  const runs = series.flatMap(({ a, b }) => a.flatMap((run, i) => [run, b[i]!]));

  // What one refusal costs the service, next to one fast call: the slow lane full, and as
  // many callers of the slow tool as the fast tool had, every one of them refused.
  await saturate(CONFIGURATIONS[0]!);
  const cpuBefore = await cpuNow();
  const refusedBefore = refused(await callers.stats());
  const flood = await runLoad({
    url: invoke('slow'),
    connections: s.connections,
    durationS: s.quick ? 0.5 : 2,
    headers: key.headers,
    body,
  });
  const cpuAfter = await cpuNow();
  const refusals = (flood.statuses['503'] ?? 0) + refused(await callers.stats()) - refusedBefore;
  await drain(CONFIGURATIONS[0]!);
  await callers.close();
  const fastCalls = series[0]!.a;
  const refusalCost = {
    refusalsPerS: refusals / flood.durationS,
    serviceCpuUsPerRefusal: ((cpuAfter.service - cpuBefore.service) * 1e6) / refusals,
    serviceCpuUsPerFastCall: median(fastCalls.map((run) => (run.cpuCores.service * 1e6) / run.reqPerS)),
    otherAnswers: flood.ok + flood.errors + flood.non2xx - (flood.statuses['503'] ?? 0),
  };

  const summaries = series.map(({ configuration, a, b }) => summarise(configuration, a, b));
  const checks = check(runs);
  if (refusalCost.otherAnswers > 0) {
    checks.problems.push(`${refusalCost.otherAnswers} calls of the full slow lane were not refused with 503`);
  }
  const lanes = summaries[0]!;
  const targetMet = lanes.ratios.p99Ms.median <= TARGET_P99_RATIO;

  const rows = summaries.flatMap((summary) => [
    row(summary.configuration, 'A: fast alone', summary.A),
    row(summary.configuration, 'B: slow saturated', summary.B),
    {
      configuration: summary.configuration,
      phase: 'B/A per pair',
      'p50 ms': range(summary.ratios.p50Ms, 3),
      'p99 ms': range(summary.ratios.p99Ms, 3),
      'req/s': range(summary.ratios.reqPerS, 3),
      'failed calls B': String(summary.failedInB),
    },
    {
      configuration: summary.configuration,
      phase: 'B/A of medians',
      'p50 ms': fixed(summary.ofMedians.p50Ms, 3),
      'p99 ms': fixed(summary.ofMedians.p99Ms, 3),
      'req/s': fixed(summary.ofMedians.reqPerS, 3),
      'failed calls B': '',
    },
  ]);
  printTable('fast tool, median (min-max) over the runs of each phase', rows);
  printTable(
    'CPU used during the runs, in cores (median)',
    summaries.flatMap((summary) =>
      (['A', 'B'] as const).map((phase) => {
        const cpu = summary.cpuCores[phase];
        return {
          configuration: summary.configuration,
          phase,
          ...Object.fromEntries(PROCESSES.map((name) => [name, fixed(cpu[name])])),
          total: fixed(PROCESSES.reduce((sum, name) => sum + cpu[name], 0)),
        };
      }),
    ),
  );
  process.stdout.write(
    `\nwith lanes, fast-lane p99 B/A ${fixed(lanes.ratios.p99Ms.median, 3)} (target <= ${TARGET_P99_RATIO}): ` +
      `${targetMet ? 'met' : 'NOT met'}; slow calls refused during B: ${fixed(lanes.slowRefusedPerS.median, 0)}/s (median)\n` +
      `a refusal (full slow lane, ${fixed(refusalCost.refusalsPerS, 0)}/s) cost the service ` +
      `${fixed(refusalCost.serviceCpuUsPerRefusal, 0)} µs of CPU; a fast call ${fixed(refusalCost.serviceCpuUsPerFastCall, 0)} µs ` +
      `(ratio ${fixed(refusalCost.serviceCpuUsPerRefusal / refusalCost.serviceCpuUsPerFastCall, 3)})\n` +
      `shared lane: fast p99 x${fixed(summaries[1]!.ratios.p99Ms.median, 1)}, throughput x${fixed(summaries[1]!.ratios.reqPerS.median, 3)}\n` +
      `checks: ${checks.problems.length === 0 ? 'all passed' : checks.problems.join('; ')}\n`,
  );

  if (s.quick) process.stdout.write('quick mode: results not written\n');
  else {
    const file = writeResults('isolation', {
      settings: {
        ...s,
        slowLane: SLOW,
        fastLane: FAST,
        sharedLane: {
          concurrency: SLOW.concurrency + FAST.concurrency,
          queueCapacity: SLOW.queueCapacity + FAST.queueCapacity,
        },
        SLOW_CALLERS,
        pinning,
        loadAverageAtStart: loadavg(),
      },
      summary: summaries,
      refusalCost,
      target: { fastLaneP99Ratio: TARGET_P99_RATIO, met: targetMet },
      checks,
      runs,
    });
    process.stdout.write(`wrote ${file}\n`);
  }
  if (checks.problems.length > 0) process.exitCode = 1;
}

const chosen = settings();
// Start-up and warm-up, two configurations of pairs of two runs plus filling and emptying the
// slow lane, the refusal cost; half as much again for a slow machine.
const estimateMs = 15_000 + (chosen.pairs + SHARED_PAIRS) * (2 * chosen.durationS * 1_000 + 1_500);
runMain('isolation', () => main(chosen), { budgetMs: Math.max(BUDGET_MS, 1.5 * estimateMs) });
