/** What the scale benchmark prints, and its targets. */
import { fixed, printTable, range } from '../support/report';
import type { AdmissionFigures } from './admission';
import type { CallRun } from './calls';
import { growth } from './lanes';
import type { LaneSideFigures, TenantSideFigures } from './phases';
import type { RedisFootprint } from './redis-memory';
import type { AdmissionSummary, SideSummary } from './summary';

/** CPU per call with the most tenants over with one: at most this. */
export const TARGET_TENANT_RATIO = 1.2;
/** Scrape time per lane added, from the middle count to the most, over that from the fewest to the middle: at most this. */
export const TARGET_SCRAPE_GROWTH = 1.5;

interface Phase<Figures> {
  sides: Figures[];
  runs: CallRun[];
  summary: SideSummary[];
}

export interface ScaleResults {
  admission: { figures: AdmissionFigures; summary: AdmissionSummary };
  memory: Phase<TenantSideFigures>;
  redis?: Phase<TenantSideFigures> & {
    /** Right after the apps stopped, and once the keys that expire within seconds are gone (`idleAfterMs` later). */
    stopped: Array<{ tenants: number; footprint: RedisFootprint }>;
    idle: Array<{ tenants: number; footprint: RedisFootprint }>;
    idleAfterMs: number;
  };
  lanes: Phase<LaneSideFigures>;
  yamlStarts: Array<{ tenants: number; startCpuS: number }>;
}

/** The redis hook's figures of a side, after its warm-up. */
interface AfterWarmUp {
  usedMemoryGrowth: number;
  footprint: RedisFootprint;
}

const last = <T>(values: readonly T[]): T => values.at(-1)!;

export function scaleTargets(results: ScaleResults) {
  const inProcess = results.admission.summary.filter((candidate) => candidate.group === 'tenants');
  const memory = last(results.memory.summary).vsFirst.cpuUsPerCall.median;
  const redis = results.redis && last(results.redis.summary).vsFirst.cpuUsPerCall.median;
  const counts = results.lanes.sides.map((side) => side.lanes);
  const scrape = growth(
    counts,
    results.lanes.sides.map((side) => side.metrics.ms.median),
  );
  const lanesRoute = growth(
    counts,
    results.lanes.sides.map((side) => side.lanesRoute.ms.median),
  );
  const idle = results.redis && last(results.redis.idle);
  const neverExpire = idle?.footprint.kinds.filter((kind) => kind.neverExpire > 0).map((kind) => kind.kind) ?? [];
  return {
    tenantsInProcess: {
      ratio: last(inProcess).vsFewest.median,
      met: last(inProcess).vsFewest.median <= TARGET_TENANT_RATIO,
    },
    tenantsMemory: { ratio: memory, met: memory <= TARGET_TENANT_RATIO },
    tenantsRedis: redis === undefined ? undefined : { ratio: redis, met: redis <= TARGET_TENANT_RATIO },
    scrape: { ...scrape, met: scrape.lastStepOverFirst <= TARGET_SCRAPE_GROWTH },
    lanesRoute,
    idleExpires: idle && {
      bytesPerTenant: idle.footprint.bytes / idle.tenants,
      neverExpire,
      met: neverExpire.length === 0,
    },
  };
}

export type ScaleTargets = ReturnType<typeof scaleTargets>;

const verdict = (met: boolean | undefined) => (met === undefined ? 'not measured' : met ? 'met' : 'NOT met');
const kib = (bytes: number) => `${fixed(bytes / 1024, 1)} KiB`;

function printAdmission({ figures, summary }: ScaleResults['admission']): void {
  printTable(
    `in process: ns per call (median, min-max of ${figures.settings.rounds} rounds); × the fewest, per round`,
    summary.map((candidate) => ({
      candidate: candidate.name,
      'ns/call': range(candidate.ns, 0),
      '× fewest': range(candidate.vsFewest, 2),
    })),
  );
  const { memory } = figures;
  process.stdout.write(
    `heap with ${memory.tenants.toLocaleString('en')} tenants (forced GC): ${fixed(memory.configuredBytesPerTenant, 0)} B per ` +
      `configured tenant, ${fixed(memory.activeBytesPerTenant, 0)} B more per tenant once each made a call ` +
      `(that pass: ${fixed(memory.firstCallNs / 1_000, 1)} µs a call)\n`,
  );
}

function printTenants(title: string, phase: Phase<TenantSideFigures>, timedScrapes: boolean): void {
  printTable(
    title,
    phase.summary.map((side, i) => {
      const figures = phase.sides[i]!;
      return {
        side: side.side,
        'CPU µs/call': range(side.cpuUsPerCall, 1),
        '× 1 tenant': range(side.vsFirst.cpuUsPerCall, 2),
        'req/s': range(side.reqPerS, 0),
        'p99 ms': range(side.p99Ms, 2),
        'start s (CPU s)': `${fixed(figures.startMs / 1_000, 1)} (${fixed(figures.startCpuS, 1)})`,
        ...(timedScrapes && { '/metrics ms': range(figures.metrics.ms, 1) }),
        '/metrics size': kib(figures.metrics.bytes),
      };
    }),
  );
}

function printRedisMemory(redis: NonNullable<ScaleResults['redis']>): void {
  printTable(
    "Redis after one call of every tenant: keys under the app's prefix (MEMORY USAGE), and INFO used_memory growth",
    redis.sides.map((side) => {
      const { usedMemoryGrowth, footprint } = side.afterWarmUp as AfterWarmUp;
      return {
        side: side.side,
        keys: footprint.keys,
        'bytes/tenant': fixed(footprint.bytes / side.tenants, 0),
        'used_memory growth/tenant': fixed(usedMemoryGrowth / side.tenants, 0),
        kinds: footprint.kinds.map((kind) => `${kind.kind} ${kind.keys}`).join(', '),
      };
    }),
  );
  const kinds = (footprint: RedisFootprint, tenants: number) =>
    footprint.kinds.map((kind) => ({
      kind: kind.kind,
      keys: kind.keys,
      'bytes/key': fixed(kind.bytes / kind.keys, 0),
      'bytes/tenant': fixed(kind.bytes / tenants, 0),
      'TTL s (median, min-max)': kind.ttlMs
        ? `${fixed(kind.ttlMs.median / 1_000, 1)} (${fixed(kind.ttlMs.min / 1_000, 1)}-${fixed(kind.ttlMs.max / 1_000, 1)})`
        : '',
      'never expire': kind.neverExpire,
    }));
  const { tenants, footprint: stopped } = last(redis.stopped);
  const idle = last(redis.idle).footprint;
  printTable(
    `Redis right after the apps stopped, ${tenants.toLocaleString('en')} tenants: ${stopped.keys} keys, ` +
      `${fixed(stopped.bytes / tenants, 0)} B per tenant`,
    kinds(stopped, tenants),
  );
  printTable(
    `... and ${fixed(redis.idleAfterMs / 1_000, 1)} s later (idle): ${idle.keys} keys, ${fixed(idle.bytes / tenants, 0)} B per tenant`,
    kinds(idle, tenants),
  );
}

function printLanes(lanes: ScaleResults['lanes'], targets: ScaleTargets): void {
  printTable(
    'lanes and tools over HTTP (median, min-max); reads on the idle service (median, min-max of the reads)',
    lanes.summary.map((side, i) => {
      const figures = lanes.sides[i]!;
      return {
        side: side.side,
        'CPU µs/call': range(side.cpuUsPerCall, 1),
        '× 1 lane': range(side.vsFirst.cpuUsPerCall, 2),
        'req/s': range(side.reqPerS, 0),
        '/metrics ms': range(figures.metrics.ms, 1),
        '/metrics size': kib(figures.metrics.bytes),
        '/v1/lanes ms': range(figures.lanesRoute.ms, 1),
        '/v1/lanes size': kib(figures.lanesRoute.bytes),
      };
    }),
  );
  const counts = lanes.sides.map((side) => side.lanes);
  const perLane = (us: number[]) => us.map((value, i) => `${fixed(value, 1)} µs (to ${counts[i + 1]})`).join(', ');
  process.stdout.write(
    `time per lane added from ${counts[0]}: /metrics ${perLane(targets.scrape.perLaneUs)}; ` +
      `/v1/lanes ${perLane(targets.lanesRoute.perLaneUs)}\n` +
      `last step over first: /metrics ${fixed(targets.scrape.lastStepOverFirst, 2)}, /v1/lanes ${fixed(targets.lanesRoute.lastStepOverFirst, 2)}\n`,
  );
}

export function printScale(results: ScaleResults, targets: ScaleTargets): void {
  printAdmission(results.admission);
  printTenants('tenants over HTTP, memory store (median, min-max of the rounds)', results.memory, true);
  if (results.redis) {
    printTenants('tenants over HTTP, Redis store (median, min-max of the rounds)', results.redis, false);
    printRedisMemory(results.redis);
  }
  printLanes(results.lanes, targets);
  printTable(
    'node dist/main.js on a YAML file: CPU until it listens',
    results.yamlStarts.map((start) => ({ tenants: start.tenants, 'CPU s': fixed(start.startCpuS, 2) })),
  );
  const ratio = (target: { ratio: number; met: boolean } | undefined) =>
    target ? `${fixed(target.ratio, 2)}: ${verdict(target.met)}` : 'not measured';
  process.stdout.write(
    `\ntargets: CPU per call, most tenants / one (<= ${TARGET_TENANT_RATIO}): in process ${ratio(targets.tenantsInProcess)}; ` +
      `memory store ${ratio(targets.tenantsMemory)}; Redis ${ratio(targets.tenantsRedis)}\n` +
      `scrape time linear in lanes (last step / first <= ${TARGET_SCRAPE_GROWTH}): ` +
      `${fixed(targets.scrape.lastStepOverFirst, 2)}: ${verdict(targets.scrape.met)}\n` +
      `idle tenant state expires: ${
        targets.idleExpires
          ? `${fixed(targets.idleExpires.bytesPerTenant, 0)} B per idle tenant in Redis; ` +
            `${targets.idleExpires.met ? 'met' : `NOT met (never expire: ${targets.idleExpires.neverExpire.join(', ')})`}`
          : 'not measured'
      }\n`,
  );
}
