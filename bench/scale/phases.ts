/**
 * The scale benchmark's phases over HTTP: servers started one at a time (each start timed) and
 * warmed up, then measured in alternated rounds, then read (`/metrics`, `/v1/lanes`) while idle,
 * checked and stopped. Tenants: the service's app with N tenants on a store. Lanes: the service
 * (`node dist/main.js`) with L lanes and tools. Start-up: the service on a YAML file with N tenants.
 */
import { parsePromText } from '../../test/support/prom-text';
import { cpuSecondsOf } from '../support/cpu';
import { metricSum } from '../support/metric-sum';
import { onCleanup } from '../support/processes';
import { inRounds } from '../support/rounds';
import { apiKey, type Service, startService } from '../support/service';
import { type CallRun, counted, runCalls, type Side } from './calls';
import { lanesConfig, laneOf, type ReadFigures, timeReads, toolOf } from './lanes';
import { makeTenants, tenantsConfig } from './tenants';
import { checkTenantSide, startTenantSide, type TenantSide } from './tenant-sides';

/** How the runs of a phase go. */
export interface RunSettings {
  pairs: number;
  durationS: number;
  connections: number;
  /** Reads of `/metrics` (and `/v1/lanes`) per server, timed. */
  reads: number;
  /** A warm-up of this long (0: none), or one call of every tenant where there are many. */
  warmUpS: number;
}

/** From this many tenants, the warm-up is one call of each (`amount`) rather than `warmUpS`. */
const WARM_UP_BY_AMOUNT_FROM = 5_000;
/** The most a warm-up by amount may take (100,000 calls take about 15 s on the Redis store). */
const WARM_UP_MAX_S = 60;
const LOG = (line: string) => process.stdout.write(`${line}\n`);

const runLine = (run: CallRun) =>
  `  ${run.round === 0 ? 'warm-up' : `round ${run.round}`} ${run.side}: ${run.cpuUsPerCall.toFixed(1)} µs CPU/call, ` +
  `${run.reqPerS.toFixed(0)} req/s, p99 ${run.p99Ms.toFixed(2)} ms${run.failed ? `, ${run.failed} FAILED` : ''}`;

async function measureRounds<S extends Side>(sides: readonly S[], s: RunSettings): Promise<CallRun[]> {
  return inRounds(s.pairs, sides, async (side, round) => {
    const run = await runCalls(side, round, { connections: s.connections, durationS: s.durationS });
    LOG(runLine(run));
    return run;
  });
}

async function warmUp(side: Side, s: RunSettings): Promise<CallRun | undefined> {
  const byAmount = side.count >= WARM_UP_BY_AMOUNT_FROM;
  if (!byAmount && s.warmUpS === 0) return undefined;
  const run = await runCalls(side, 0, {
    connections: s.connections,
    durationS: byAmount ? WARM_UP_MAX_S : s.warmUpS,
    amount: byAmount ? side.count : undefined,
  });
  LOG(runLine(run));
  return run;
}

export interface TenantSideFigures {
  side: string;
  tenants: number;
  startMs: number;
  startCpuS: number;
  heapAtStartBytes: number;
  /** The warm-up: with many tenants, the first call of each (its state made). */
  warmUp?: CallRun;
  /** Reads of `/metrics` after the rounds, or the one read the checks need. */
  metrics: Omit<ReadFigures, 'text'>;
  /** What a phase's hook measured after the side's warm-up (Redis: its keys). */
  afterWarmUp?: unknown;
  counted: ReturnType<typeof checkTenantSide>;
}

/**
 * Tenants on one store: for each count, the app started (after `beforeStart`) and warmed up (then
 * `afterWarmUp`); the rounds; `/metrics` read (`reads` times, or once when `timeScrapes` is false).
 */
export async function tenantPhase(
  label: string,
  counts: readonly number[],
  store: (count: number) => object,
  s: RunSettings,
  problems: string[],
  hooks: {
    beforeStart?: (count: number) => Promise<void>;
    afterWarmUp?: (count: number) => Promise<unknown>;
    timeScrapes?: boolean;
  } = {},
) {
  const sides: TenantSide[] = [];
  const figures: TenantSideFigures[] = [];
  const warmUps = new Map<TenantSide, { run: CallRun | undefined; after: unknown }>();
  const stopAll = async () => void (await Promise.all(sides.map((side) => side.app.stop())));
  // Stopped before any cleanup registered earlier (a store's keys deleted) runs.
  const forget = onCleanup(stopAll);
  try {
    for (const count of counts) {
      await hooks.beforeStart?.(count);
      const side = await startTenantSide(count, label, store(count));
      sides.push(side);
      LOG(`  ${side.name}: started in ${(side.startMs / 1_000).toFixed(1)} s`);
      const run = await warmUp(side, s);
      warmUps.set(side, { run, after: await hooks.afterWarmUp?.(count) });
    }
    const runs = await measureRounds(sides, s);
    for (const side of sides) {
      const read = await timeReads(side.app.url('/metrics'), hooks.timeScrapes === false ? 1 : s.reads);
      const { run: warmUpRun, after } = warmUps.get(side)!;
      const answered = [...(warmUpRun ? [warmUpRun] : []), ...runs.filter((run) => run.side === side.name)];
      const inMetrics = checkTenantSide(
        side,
        parsePromText(read.text),
        answered.reduce((sum, run) => sum + run.ok, 0),
        problems,
      );
      for (const run of answered) if (run.failed > 0) problems.push(failure(run));
      figures.push({
        side: side.name,
        tenants: side.count,
        startMs: side.startMs,
        startCpuS: side.startCpuS,
        heapAtStartBytes: side.heapAtStartBytes,
        warmUp: warmUpRun,
        metrics: { ms: read.ms, bytes: read.bytes },
        afterWarmUp: after,
        counted: inMetrics,
      });
    }
    return { sides: figures, runs };
  } finally {
    forget();
    await stopAll();
  }
}

const failure = (run: CallRun) =>
  `${run.side} ${run.round === 0 ? 'warm-up' : `round ${run.round}`}: ${run.failed} calls failed ${JSON.stringify(run.statuses)}`;

interface LaneSide extends Side {
  readonly service: Service;
  readonly startMs: number;
}

export interface LaneSideFigures {
  side: string;
  lanes: number;
  startMs: number;
  metrics: Omit<ReadFigures, 'text'>;
  lanesRoute: Omit<ReadFigures, 'text'>;
}

/** Lanes and tools: for each count, the service started and warmed up; the rounds; the reads. */
export async function lanePhase(counts: readonly number[], s: RunSettings, problems: string[]) {
  const key = apiKey('agent');
  const sides: LaneSide[] = [];
  const figures: LaneSideFigures[] = [];
  try {
    for (const count of counts) {
      const started = performance.now();
      const service = await startService(lanesConfig(key, count), { name: `service (${count} lanes)` });
      const pid = service.child.process.pid;
      const side: LaneSide = {
        name: counted(count, 'lane'),
        count,
        base: service.base,
        service,
        startMs: performance.now() - started,
        request: (n) => ({ path: `/v1/tools/${toolOf(n % count)}/invoke`, headers: key.headers }),
        cpuUs: async () => cpuSecondsOf(pid) * 1e6,
      };
      sides.push(side);
      LOG(`  ${side.name}: started in ${(side.startMs / 1_000).toFixed(1)} s`);
      const run = await warmUp(side, s);
      if (run && run.failed > 0) problems.push(failure(run));
    }
    const runs = await measureRounds(sides, s);
    for (const run of runs) if (run.failed > 0) problems.push(failure(run));
    for (const side of sides) {
      const metrics = await timeReads(side.service.url('/metrics'), s.reads);
      const lanes = await timeReads(side.service.url('/v1/lanes'), s.reads, key.headers);
      checkLaneSide(side, metrics.text, lanes.text, problems);
      figures.push({
        side: side.name,
        lanes: side.count,
        startMs: side.startMs,
        metrics: { ms: metrics.ms, bytes: metrics.bytes },
        lanesRoute: { ms: lanes.ms, bytes: lanes.bytes },
      });
    }
    return { sides: figures, runs };
  } finally {
    await Promise.all(sides.map((side) => side.service.stop()));
  }
}

/** Every lane in `/v1/lanes` and in the metrics, every tool called. */
function checkLaneSide(side: LaneSide, metricsText: string, lanesText: string, problems: string[]): void {
  const metrics = parsePromText(metricsText);
  const listed = Object.keys((JSON.parse(lanesText) as { lanes: object }).lanes);
  const inMetrics = new Set(
    metrics.samples.filter((sample) => sample.name === 'bulkhead_lane_capacity').map((sample) => sample.labels.lane),
  );
  const called = new Set(
    metrics.samples
      .filter((sample) => sample.name === 'bulkhead_calls_total' && sample.labels.outcome === 'ok' && sample.value > 0)
      .map((sample) => sample.labels.tool),
  );
  for (let i = 0; i < side.count; i++) {
    if (!listed.includes(laneOf(i)) || !inMetrics.has(laneOf(i)) || !called.has(toolOf(i))) {
      problems.push(`${side.name}: lane ${laneOf(i)} or tool ${toolOf(i)} missing from /v1/lanes or the metrics`);
      return;
    }
  }
  if (listed.length !== side.count) problems.push(`${side.name}: /v1/lanes lists ${listed.length} lanes`);
  if (metricSum(metrics, 'bulkhead_rate_limit_failed_open_total') > 0) {
    problems.push(`${side.name}: rate-limit decisions failed open`);
  }
}

/**
 * `node dist/main.js` on a YAML file with N tenants: the CPU time the service spent until it
 * listened (from /proc: not the YAML this process writes for it).
 */
export async function yamlStartPhase(counts: readonly number[]) {
  const starts: Array<{ tenants: number; startCpuS: number }> = [];
  for (const count of counts) {
    const config = tenantsConfig(makeTenants(count), { kind: 'memory' });
    const service = await startService(config, { name: `service (YAML, ${count} tenants)`, startTimeoutMs: 60_000 });
    const startCpuS = cpuSecondsOf(service.child.process.pid);
    await service.stop();
    starts.push({ tenants: count, startCpuS });
    LOG(`  node dist/main.js, YAML with ${counted(count, 'tenant')}: ${startCpuS.toFixed(2)} CPU s to listen`);
  }
  return starts;
}
