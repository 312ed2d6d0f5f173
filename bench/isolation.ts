/**
 * Isolation, the headline benchmark (issue 6, item 1): does a saturated slow lane slow the
 * calls of another lane? And what would one shared limiter have done instead?
 *
 *   npm run bench -- isolation [options]
 *
 * Options:
 *   --pairs N        A/B pairs per configuration, alternated A B A B ... (default 4, at least 4)
 *   --duration S     seconds per measured run (default 3)
 *   --connections N  autocannon connections calling the fast tool (default 16)
 *   --slow-ms N      how long the slow upstream takes to answer: N ms ± 50 % (default 2000)
 *   --retry-ms N     how long a refused slow caller waits before calling again (default 100)
 *   --quick          1 pair of 1 s per configuration: does it still run? (no results written)
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
 * full lane was not refused). About 60 s; bounded at 110 s (more with more pairs or longer runs).
 */
import { cpus, loadavg } from 'node:os';
import { setTimeout as wait } from 'node:timers/promises';
import type { LaneSnapshot } from '../src/bulkhead';
import {
  alternate,
  type CallersProcess,
  type CallersStats,
  type LoadResult,
  runLoad,
  startCallersProcess,
} from './support/load';
import { runMain } from './support/processes';
import { printTable, writeResults } from './support/report';
import { apiKey, type Service, startService, waitUntil } from './support/service';
import { median, pairedRatio, summary } from './support/stats';
import { startUpstream, type UpstreamServer } from './support/upstream-server';
import { option, runOptions } from './support/options';

/** The whole run with the default settings, start-up to clean-up; more pairs or longer runs get more. */
const BUDGET_MS = 110_000;
const SLOW = { concurrency: 8, queueCapacity: 16 };
const FAST = { concurrency: 16, queueCapacity: 64 };
const OVERFLOW_CALLERS = 16;
/** Callers of the slow tool in phase B: C running, Q waiting, and the overflow. */
const SLOW_CALLERS = SLOW.concurrency + SLOW.queueCapacity + OVERFLOW_CALLERS;
const SAMPLE_EVERY_MS = 100;
const TARGET_P99_RATIO = 1.2;

interface Configuration {
  name: 'lanes' | 'shared';
  fastTool: string;
  slowTool: string;
  /** The lane the slow tool runs in, and what saturating it means there. */
  slowLane: string;
  slowLaneConcurrency: number;
}

const CONFIGURATIONS: Configuration[] = [
  {
    name: 'lanes',
    fastTool: 'fast',
    slowTool: 'slow',
    slowLane: 'slow',
    slowLaneConcurrency: SLOW.concurrency,
  },
  {
    name: 'shared',
    fastTool: 'shared_fast',
    slowTool: 'shared_slow',
    slowLane: 'shared',
    slowLaneConcurrency: SLOW.concurrency + FAST.concurrency,
  },
];

interface Settings {
  pairs: number;
  durationS: number;
  connections: number;
  slowMs: number;
  retryMs: number;
  quick: boolean;
}

/** What the lanes looked like, sampled every 100 ms during a run. */
interface LaneSamples {
  samples: number;
  slowActive: { min: number; median: number; max: number };
  slowWaiting: { min: number; median: number; max: number };
  /** Samples with the slow lane at exactly C running and (lanes) Q waiting. */
  fullShare: number;
}

interface Run extends LoadResult {
  configuration: Configuration['name'];
  pair: number;
  phase: 'A' | 'B';
  lanes: LaneSamples;
  /** The most slow calls at the upstream at once during the run. */
  slowPeakAtUpstream: number;
  /** B: slow calls refused (`queue_full`) during the run, per second. */
  slowRefusedPerS?: number;
  /** B: slow calls that got an answer other than 200 or 503 during the run. */
  slowOtherAnswers?: number;
  /** CPU each process used during the run, in cores (CPU seconds per second). */
  cpuCores: Cpu;
}

interface Cpu {
  service: number;
  /** This process: autocannon and the lane sampler. */
  loadGenerator: number;
  upstream: number;
  /** The slow tool's callers (idle in phase A). */
  callers: number;
}

const PROCESSES = ['service', 'loadGenerator', 'upstream', 'callers'] as const;

function cores(before: Cpu, after: Cpu, seconds: number): Cpu {
  const used = (name: keyof Cpu) => (after[name] - before[name]) / seconds;
  return {
    service: used('service'),
    loadGenerator: used('loadGenerator'),
    upstream: used('upstream'),
    callers: used('callers'),
  };
}

const cpuText = (cpu: Cpu) =>
  `${PROCESSES.map((name) => `${name} ${fixed(cpu[name])}`).join(', ')}, total ${fixed(PROCESSES.reduce((sum, name) => sum + cpu[name], 0))}`;

function settings(): Settings {
  return {
    ...runOptions(16),
    slowMs: option('slow-ms', 2_000, 500),
    retryMs: option('retry-ms', 100, 0),
  };
}

function config(upstream: UpstreamServer, slowMs: number, key: { sha256: string; tenant: string }) {
  const httpTool = (lane: string, url: string) => ({
    lane,
    kind: 'http',
    url,
    timeoutMs: 60_000,
    retry: { maxAttempts: 1 },
    // The slow calls cut short when their callers leave must not open a breaker.
    breaker: { volumeThreshold: 100_000, errorThresholdPercentage: 100 },
  });
  // Jittered, so the slow calls do not all end at once in waves.
  const slowUrl = upstream.url(`/slow?ms=${slowMs}&jitter=0.5`);
  return {
    server: { shutdownDrainMs: 1_000 },
    auth: { allowAnonymous: false, apiKeys: [key] },
    lanes: {
      slow: { ...SLOW, queueTtlMs: 60_000 },
      fast: FAST,
      shared: {
        concurrency: SLOW.concurrency + FAST.concurrency,
        queueCapacity: SLOW.queueCapacity + FAST.queueCapacity,
        queueTtlMs: 60_000,
      },
    },
    tools: {
      slow: httpTool('slow', slowUrl),
      fast: httpTool('fast', upstream.url('/fast')),
      shared_slow: httpTool('shared', slowUrl),
      shared_fast: httpTool('shared', upstream.url('/fast')),
    },
    containment: {
      // Above the sum of every lane's C: the outbound pool must not be a shared limit itself.
      pools: { normalMaxConcurrency: 256, timeoutMs: 60_000 },
      egress: { allowHosts: ['127.0.0.1'], allowPrivateCidrs: ['127.0.0.1/32'] },
    },
  };
}

/** Samples the lanes every 100 ms until `stop()`. */
function sampleLanes(service: Service, headers: Record<string, string>, configuration: Configuration) {
  const seen: LaneSnapshot[] = [];
  let stopped = false;
  const sampling = (async () => {
    while (!stopped) {
      seen.push((await service.lanes(headers))[configuration.slowLane]!);
      await wait(SAMPLE_EVERY_MS);
    }
  })();
  return async (saturated: boolean): Promise<LaneSamples> => {
    stopped = true;
    await sampling;
    const active = seen.map((lane) => lane.active);
    const waiting = seen.map((lane) => lane.waiting);
    const full = seen.filter(
      (lane) =>
        lane.active === configuration.slowLaneConcurrency &&
        (configuration.name === 'shared' || lane.waiting === SLOW.queueCapacity),
    ).length;
    const summary = (values: number[]) => ({
      min: Math.min(...values),
      median: median(values),
      max: Math.max(...values),
    });
    return {
      samples: seen.length,
      slowActive: summary(active),
      slowWaiting: summary(waiting),
      fullShare: saturated ? full / seen.length : 0,
    };
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
  const body = JSON.stringify({ arguments: {} });
  const invoke = (tool: string) => service.url(`/v1/tools/${tool}/invoke`);

  for (const tool of ['fast', 'shared_fast']) {
    const answer = await service.call(`/v1/tools/${tool}/invoke`, { method: 'POST', headers: key.headers, body });
    if (answer.status !== 200) throw new Error(`probe of ${tool} answered ${answer.status}: ${answer.text}`);
  }

  process.stdout.write(
    `isolation: ${s.pairs} A/B pairs of ${s.durationS} s per configuration, ${s.connections} connections on the fast tool; ` +
      `B adds ${SLOW_CALLERS} callers of the slow tool (${s.slowMs} ms upstream; lane C ${SLOW.concurrency}, Q ${SLOW.queueCapacity}; ` +
      `refused callers retry after ${s.retryMs} ms)\nnode ${process.version}, ${cpus().length} CPUs, load average ${loadavg()
        .map((load) => load.toFixed(2))
        .join(' ')}\n`,
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
      s.pairs,
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

function summarise(configuration: Configuration['name'], a: Run[], b: Run[]) {
  const stat = (series: Run[], pick: (run: Run) => number) => summary(series.map(pick));
  const phase = (series: Run[]) => ({
    p50Ms: stat(series, (run) => run.p50Ms),
    p99Ms: stat(series, (run) => run.p99Ms),
    reqPerS: stat(series, (run) => run.reqPerS),
  });
  const A = phase(a);
  const B = phase(b);
  const paired = (pick: (run: Run) => number) => pairedRatio(a.map(pick), b.map(pick));
  return {
    configuration,
    A,
    B,
    ratios: { p50Ms: paired((r) => r.p50Ms), p99Ms: paired((r) => r.p99Ms), reqPerS: paired((r) => r.reqPerS) },
    ofMedians: {
      p50Ms: B.p50Ms.median / A.p50Ms.median,
      p99Ms: B.p99Ms.median / A.p99Ms.median,
      reqPerS: B.reqPerS.median / A.reqPerS.median,
    },
    slowRefusedPerS: stat(b, (run) => run.slowRefusedPerS ?? 0),
    cpuCores: { A: medianCpu(a), B: medianCpu(b) },
    failedInB: b.reduce((sum, run) => sum + run.non2xx + run.errors, 0),
  };
}

function medianCpu(runs: Run[]): Cpu {
  const of = (name: keyof Cpu) => median(runs.map((run) => run.cpuCores[name]));
  return {
    service: of('service'),
    loadGenerator: of('loadGenerator'),
    upstream: of('upstream'),
    callers: of('callers'),
  };
}

function check(runs: Run[]) {
  const problems: string[] = [];
  for (const run of runs) {
    const at = `${run.configuration} pair ${run.pair} ${run.phase}`;
    const limit = CONFIGURATIONS.find((c) => c.name === run.configuration)!.slowLaneConcurrency;
    // With lanes every fast call succeeds; in the shared lane B, failures are the finding.
    if ((run.configuration === 'lanes' || run.phase === 'A') && run.non2xx + run.errors > 0) {
      problems.push(`${at}: ${run.non2xx} non-2xx and ${run.errors} errors among the fast calls`);
    }
    if (run.ok === 0 && (run.configuration === 'lanes' || run.phase === 'A'))
      problems.push(`${at}: no fast call succeeded`);
    if (run.phase === 'A' && run.slowPeakAtUpstream !== 0)
      problems.push(`${at}: slow calls at the upstream in phase A`);
    if (run.phase === 'B') {
      if (run.slowPeakAtUpstream !== limit) {
        problems.push(`${at}: the slow upstream peaked at ${run.slowPeakAtUpstream} calls, not the lane's C ${limit}`);
      }
      if (run.lanes.slowActive.median !== limit) problems.push(`${at}: the slow lane was not kept full`);
      if (run.configuration === 'lanes' && !(run.slowRefusedPerS! > 0))
        problems.push(`${at}: no slow call was refused`);
      if (run.slowOtherAnswers) problems.push(`${at}: ${run.slowOtherAnswers} slow calls answered other than 200/503`);
    }
  }
  return { problems };
}

type Stat = { median: number; min: number; max: number };

function row(configuration: string, phase: string, figures: { p50Ms: Stat; p99Ms: Stat; reqPerS: Stat }) {
  return {
    configuration,
    phase,
    'p50 ms': range(figures.p50Ms),
    'p99 ms': range(figures.p99Ms),
    'req/s': range(figures.reqPerS, 0),
    'failed calls B': '',
  };
}

const fixed = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const range = (s: Stat, digits = 2) => `${fixed(s.median, digits)} (${fixed(s.min, digits)}-${fixed(s.max, digits)})`;

const chosen = settings();
// Start-up and warm-up, two configurations of pairs of two runs plus filling and emptying the
// slow lane, the refusal cost; half as much again for a slow machine.
const estimateMs = 15_000 + 2 * chosen.pairs * (2 * chosen.durationS * 1_000 + 1_500);
runMain('isolation', () => main(chosen), { budgetMs: Math.max(BUDGET_MS, 1.5 * estimateMs) });
