/**
 * Scale (issue 16, item 3): how the cost of a call grows with the work the service holds.
 *
 *   npm run bench -- scale [options]
 *
 * Options:
 *   --pairs N          rounds of the HTTP runs, the sides alternated (default 4, at least 4)
 *   --duration S       seconds per measured run (default 1)
 *   --connections N    autocannon connections (default 32)
 *   --redis-tenants N  the most tenants on the Redis store (default 10000; 100000 adds about 20 s)
 *   --no-redis         leave the Redis store out
 *   --quick            fewer tenants and lanes, 1 round of 0.5 s, no warm-up: does it still run?
 *                      (about 17 s; nothing written)
 *
 * (a) Tenants: 1, 1,000 and 100,000, each with an API key (the config holds its SHA-256), a
 * rate limit (rpm and tpm) and a budget of its own in `rateLimits.tenants` and
 * `budgets.tenants`, every call of the builtin `echo` tool (it costs $0.000001 and one token) in
 * one lane whose queue is fair across tenants. Call n comes from tenant n mod N, so with
 * 100,000 tenants each one's state is touched once every 100,000 calls.
 *   - In process (bench/scale/admission.ts, a process of its own): the steps that know the
 *     tenant, from dist/ on the memory stores (API key, containment, rate limit, budget reserve
 *     and settle, the lane in bursts of 100 over 8 so that 92 wait in its fair queue, the
 *     tenant-aware breaker): ns per call, all together and each alone; the heap per tenant.
 *   - Over HTTP: the service's app (the built AppModule, bench/support/bare-app.ts `--app`) with
 *     N tenants, on the memory store and on Redis (127.0.0.1:6379, a prefix per app, its keys
 *     deleted at the end; 1, 1,000 and --redis-tenants there: one call from each of 100,000
 *     tenants takes the Redis store about 15 s and its start-up, which seeds every tenant's
 *     containment snapshot, 10 s). The app is started one count at a time (timed), warmed up
 *     (with many tenants: one call of each), then the counts alternate in rounds. Figures: the app's CPU µs per call (whatever the bottleneck), req/s, p99, and
 *     `GET /metrics` time and size afterwards (every configured tenant is a label).
 *   The app, not `node dist/main.js`: the YAML loader checks each mapping for duplicate keys
 *   pair by pair (quadratic: `rateLimits.tenants` and `budgets.tenants` hold one key per
 *   tenant), so the service takes minutes to read a file of 100,000 tenants. That start-up is
 *   measured on its own, for 1 and 10,000 tenants: CPU seconds until it listens.
 * (b) Lanes: the service (`node dist/main.js`) with 1, 100 and 1,000 lanes, one echo tool in
 *   each, one tenant; call n goes to tool n mod L. Figures: CPU µs per call, `GET /metrics`
 *   and `GET /v1/lanes` time (request to last byte, idle service, median of 5) and size, and
 *   how the time grows per lane; in process, a lane's admission looked up among L.
 * (c) Redis memory per tenant: after one call of every tenant, `MEMORY USAGE` of each key under
 *   the app's prefix by kind, its TTL (`PTTL`: does idle state expire?), and `INFO memory`'s
 *   `used_memory` before the app started and after the warm-up (it counts everything in that
 *   Redis); and what is left once the apps stopped, and once the keys that expire within
 *   seconds (rate-limit buckets full again) are gone.
 *
 * Targets: CPU per call with the most tenants / with one ≤ 1.2 (in process and over HTTP);
 * scrape time linear in lanes (the time per lane added from 100 to 1,000 lanes at most 1.5×
 * that from 1 to 100); memory per idle tenant stated and bounded (its keys expire).
 * Prints tables and writes bench/results/scale.json. Exits 1 if a check fails: a call failed,
 * a count in the metrics does not match the calls (every call ok, every tenant charged, every
 * lane and tool there, no rate-limit decision failed open, none isolated), or Redis keys were
 * left. About 95 s (115 s with --redis-tenants 100000) on a shared machine; bounded at 180 s.
 */
import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { setTimeout as wait } from 'node:timers/promises';
import type Redis from 'ioredis';
import { createRedisConnection, readyWithin } from '../src/store';
import { SHARED_REDIS_URL, silentLogger, uniquePrefix } from '../test/support/redis';
import { ADMISSION_NODE_ARGS, type AdmissionFigures } from './scale/admission';
import { lanePhase, type RunSettings, tenantPhase, yamlStartPhase } from './scale/phases';
import { deleteUnder, footprint, usedMemory } from './scale/redis-memory';
import { printScale, scaleTargets } from './scale/report';
import { summariseAdmission, summariseCallSides } from './scale/summary';
import { option, runOptions } from './support/options';
import { onCleanup, runForResult, runMain } from './support/processes';
import { writeResultsUnlessQuick } from './support/report';

const BUDGET_MS = 180_000;
/** Keys expiring within this long are waited for before the idle state is read. */
const IDLE_WAIT_MAX_MS = 5_000;

function settings() {
  const run = runOptions({ connections: 32, durationS: 1 });
  const { quick } = run;
  return {
    ...run,
    redis: !process.argv.includes('--no-redis'),
    tenantCounts: quick ? [1, 100] : [1, 1_000, 100_000],
    redisTenantCounts: quick ? [1, 100] : [1, 1_000, option('redis-tenants', 10_000, 2)],
    laneCounts: quick ? [1, 10] : [1, 100, 1_000],
    yamlTenantCounts: quick ? [10] : [1, 10_000],
    inProcess: {
      tenantCounts: quick ? [1, 100] : [1, 1_000, 100_000],
      laneCounts: quick ? [1, 10] : [1, 100, 1_000],
      rounds: quick ? 1 : 3,
      timeMs: quick ? 20 : 60,
    },
    reads: quick ? 1 : 5,
    // Quick: no warm-up but one call of every tenant where there are many (none there).
    warmUpS: quick ? 0 : 0.6,
  };
}
type Settings = ReturnType<typeof settings>;

/** The shared Redis, or undefined when none answers within 2 s. */
async function connectRedisIfThere(): Promise<Redis | undefined> {
  const redis = createRedisConnection({ url: SHARED_REDIS_URL, commandTimeoutMs: 10_000, logger: silentLogger });
  await readyWithin(redis, 2_000);
  if (redis.status === 'ready') return redis;
  redis.disconnect();
  return undefined;
}

function inProcess(s: Settings): Promise<AdmissionFigures> {
  const { tenantCounts, laneCounts, rounds, timeMs } = s.inProcess;
  return runForResult<AdmissionFigures>(
    'in-process admission',
    resolve(__dirname, 'scale/admission.ts'),
    [
      '--tenants',
      tenantCounts.join(','),
      '--lanes',
      laneCounts.join(','),
      '--rounds',
      `${rounds}`,
      '--time',
      `${timeMs}`,
    ],
    ADMISSION_NODE_ARGS,
  );
}

/**
 * Tenants on the Redis store, with each app's keys read after its warm-up, right after the apps
 * stopped, and once the keys that expire within seconds are gone; every key deleted at the end,
 * whatever happens (the apps are stopped first).
 */
async function redisTenants(redis: Redis, s: Settings, run: RunSettings, problems: string[]) {
  const prefixes = new Map(s.redisTenantCounts.map((count) => [count, uniquePrefix(`bh-bench-scale-${count}`)]));
  let dropping: Promise<number[]> | undefined;
  const drop = () => (dropping ??= Promise.all([...prefixes.values()].map((prefix) => deleteUnder(redis, prefix))));
  // Cleanups run latest first: the phase's own (its apps stopped) comes before this one.
  onCleanup(async () => void (await drop()));
  const read = () =>
    Promise.all(
      s.redisTenantCounts.map(async (count) => ({
        tenants: count,
        footprint: await footprint(redis, prefixes.get(count)!),
      })),
    );
  const usedBefore = new Map<number, number>();
  try {
    const phase = await tenantPhase(
      'redis',
      s.redisTenantCounts,
      (count) => ({ kind: 'redis', url: SHARED_REDIS_URL, prefix: prefixes.get(count)! }),
      run,
      problems,
      {
        beforeStart: async (count) => void usedBefore.set(count, await usedMemory(redis)),
        afterWarmUp: async (count) => ({
          usedMemoryGrowth: (await usedMemory(redis)) - usedBefore.get(count)!,
          footprint: await footprint(redis, prefixes.get(count)!),
        }),
        timeScrapes: false,
      },
    );
    // The apps are stopped: what a tenant leaves in Redis, and what is still there once the keys
    // that expire within seconds (rate-limit buckets, full again) are gone.
    const stopped = await read();
    const soonMs = Math.max(
      0,
      ...stopped.flatMap(({ footprint: left }) =>
        left.kinds.map((kind) => kind.ttlMs?.max ?? 0).filter((ms) => ms < IDLE_WAIT_MAX_MS),
      ),
    );
    await wait(soonMs + 100);
    const idle = await read();
    for (const { tenants, footprint: left } of idle) {
      if (left.keys === 0) problems.push(`redis, ${tenants} tenants: no key under its prefix`);
    }
    return { ...phase, stopped, idle, idleAfterMs: soonMs + 100 };
  } finally {
    const keysLeft = (await drop()).reduce((sum, left) => sum + left, 0);
    if (keysLeft > 0) problems.push(`${keysLeft} Redis keys left under the run's prefixes`);
  }
}

async function main(s: Settings): Promise<void> {
  const problems: string[] = [];
  const loadAtStart = loadavg();
  process.stdout.write(
    `scale: tenants ${s.tenantCounts.join(', ')} (memory), ${s.redis ? s.redisTenantCounts.join(', ') : 'none'} (Redis); ` +
      `lanes ${s.laneCounts.join(', ')}; ${s.pairs} rounds of ${s.durationS} s, ${s.connections} connections\n` +
      `node ${process.version}, ${cpus().length} CPUs, load average ${loadAtStart.map((load) => load.toFixed(2)).join(' ')}\n`,
  );
  const run: RunSettings = {
    pairs: s.pairs,
    durationS: s.durationS,
    connections: s.connections,
    reads: s.reads,
    warmUpS: s.warmUpS,
  };

  process.stdout.write('\n(a) in process: admission with tenants and lanes\n');
  const admission = await inProcess(s);

  process.stdout.write('\n(a) tenants over HTTP, memory store\n');
  const memory = await tenantPhase('memory', s.tenantCounts, () => ({ kind: 'memory' }), run, problems);

  const redis = s.redis ? await connectRedisIfThere() : undefined;
  let onRedis: Awaited<ReturnType<typeof redisTenants>> | undefined;
  if (redis) {
    process.stdout.write('\n(a, c) tenants over HTTP, Redis store\n');
    try {
      onRedis = await redisTenants(redis, s, run, problems);
    } finally {
      await redis.quit().catch(() => undefined);
    }
  } else {
    process.stdout.write(`\nRedis: ${s.redis ? `none answers at ${SHARED_REDIS_URL}` : '--no-redis'}; left out\n`);
  }

  process.stdout.write('\n(b) lanes and tools\n');
  const lanes = await lanePhase(s.laneCounts, run, problems);

  process.stdout.write('\nstart-up of node dist/main.js on a YAML file with N tenants\n');
  const yamlStarts = await yamlStartPhase(s.yamlTenantCounts);

  const results = {
    admission: { figures: admission, summary: summariseAdmission(admission) },
    memory: {
      ...memory,
      summary: summariseCallSides(
        memory.sides.map((side) => side.side),
        memory.runs,
      ),
    },
    redis: onRedis && {
      ...onRedis,
      summary: summariseCallSides(
        onRedis.sides.map((side) => side.side),
        onRedis.runs,
      ),
    },
    lanes: {
      ...lanes,
      summary: summariseCallSides(
        lanes.sides.map((side) => side.side),
        lanes.runs,
      ),
    },
    yamlStarts,
  };
  const targets = scaleTargets(results);
  printScale(results, targets);
  process.stdout.write(`\nchecks: ${problems.length === 0 ? 'all passed' : problems.join('; ')}\n`);

  writeResultsUnlessQuick('scale', s.quick, {
    settings: {
      ...s,
      loadAverageAtStart: loadAtStart,
      loadAverageAtEnd: loadavg(),
      redisUrl: redis ? SHARED_REDIS_URL : null,
    },
    ...results,
    targets,
    checks: { problems },
  });
  if (problems.length > 0) process.exitCode = 1;
}

const chosen = settings();
runMain('scale', () => main(chosen), { budgetMs: BUDGET_MS });
