/**
 * Overhead (issue 6, item 2): what does the protection cost a call, next to what a company
 * would run without it?
 *
 *   npm run bench -- overhead [options]
 *
 * Options:
 *   --pairs N        rounds, each one run of every side, alternated (default 4, at least 4)
 *   --duration S     seconds per measured run (default 2: CPU per call, the steadiest figure, settles in less)
 *   --connections N  autocannon connections (default 32)
 *   --profile        also CPU profiles (V8's sampler in the app process, 3 s of load each) of the
 *                    full pipeline on echo and of the decorated route: the top self-time
 *                    frames and where the time goes, by package (not with the measured runs)
 *   --quick          1 round of 0.5 s: does it still run? (no results written)
 *   --platforms      instead of the three comparisons: a company route with and without
 *                    `@Bulkhead` + `@CircuitBreaker` in an app on Fastify and one on Express, the
 *                    server's CPU µs per call each (bench/overhead/platforms.ts)
 *
 * Three comparisons, each a ratio of B to its baseline A measured in the same round:
 *   1. pipeline: A a bare NestJS 12 + Fastify route answering a small JSON (bench/support/bare-app.ts
 *      --bare), B the full pipeline on the builtin `echo` tool (POST /v1/tools/echo/invoke of
 *      `node dist/main.js`) for an API-key tenant: authentication, the containment read, a rate
 *      limit (rpm and tpm), a budget (the call costs $0.000001: reserved, then settled), the lane,
 *      the breaker, the ledger. Target: req/s >= 0.7x.
 *   2. route policies: in one app (the built service plus two company routes), A a route with
 *      one no-op interceptor, B the same route with `@Bulkhead` + `@CircuitBreaker` (one
 *      interceptor of ours). Both behind the service's global guard. Target: req/s >= 0.9x.
 *   3. redis: A the pipeline of 1 with the memory store, B the same with the Redis store
 *      (redis://127.0.0.1:6379, a prefix of its own, its keys deleted at the end). Target: req/s
 *      >= 0.6x. Skipped, and said so, when no Redis answers there.
 * The sides of 1 and 3 run in rounds of three (bare, memory, redis), those of 2 in pairs; the
 * per-round ratio is B/A of adjacent runs, summarised as median (min-max), besides B/A of the
 * medians. Every process is on loopback: this one (autocannon, `connections` connections,
 * each with one request in flight; every request the same bytes: API key, `{"arguments":{}}`),
 * and each app or service in a process of its own, all started before the first run. Also
 * reported: each server's CPU time per call (µs), which does not depend on whether the load
 * generator or the server was the bottleneck, and the cores each used.
 *
 * Prints tables and writes bench/results/overhead.json. Exits 1 if a check fails: a call
 * failed or was refused, a probe did not go the whole way (RateLimit headers, pool, the route
 * policy's call id), the metrics do not show every call through the lane, the budget and the
 * store (no rate-limit decision failed open), or Redis keys were left behind. About 65 s
 * (70 s with --profile); bounded at 110 s (more with more pairs or longer runs).
 */
import { cpus, loadavg } from 'node:os';
import type Redis from 'ioredis';
import type { CircuitSnapshot } from '../src/circuit-breaker';
import { createRedisConnection, readyWithin } from '../src/store';
import { deleteKeysUnder, keysUnder, SHARED_REDIS_URL, uniquePrefix } from '../test/support/redis';
import { parsePromText } from '../test/support/prom-text';
import {
  type BenchApp,
  BARE_PATH,
  INTERCEPTOR_PATH,
  POLICIES_PATH,
  POLICY_BREAKER,
  startBenchApp,
} from './support/bare-app';
import { measurePlatforms } from './overhead/platforms';
import { summariseProfile } from './overhead/profile';
import { COMPARISONS, config, type Side, SIDES, TOOL_LANE } from './overhead/sides';
import { checkPipeline, checkRoutePolicies } from './overhead/checks';
import { row, type Run, summarise } from './overhead/summary';
import { runLoad } from './support/load';
import { onCleanup, runMain } from './support/processes';
import { fixed, printTable, range, writeResults } from './support/report';
import { apiKey, type Answer, call, type Service, startService } from './support/service';
import { median } from './support/stats';
import { runOptions } from './support/options';

const BUDGET_MS = 110_000;
const BODY = JSON.stringify({ arguments: {} });
const PROFILE_S = 3;
const WARM_UP_S = 0.6;
const TOP_FRAMES = 5;

interface Settings {
  pairs: number;
  durationS: number;
  connections: number;
  profile: boolean;
  quick: boolean;
  platforms: boolean;
}

/** A server measured: where to call, and its CPU time so far. */
interface Target {
  side: Side;
  url: string;
  cpuUs(): Promise<number>;
}

function settings(): Settings {
  return {
    ...runOptions({ connections: 32, durationS: 2 }),
    profile: process.argv.includes('--profile'),
    platforms: process.argv.includes('--platforms'),
  };
}

/** The shared Redis, or undefined when none answers within 2 s. */
async function connectRedisIfThere(): Promise<Redis | undefined> {
  const redis = createRedisConnection({ url: SHARED_REDIS_URL, commandTimeoutMs: 2_000 });
  await readyWithin(redis, 2_000);
  if (redis.status === 'ready') return redis;
  redis.disconnect();
  return undefined;
}

async function main(s: Settings): Promise<void> {
  const key = apiKey('agent');
  const problems: string[] = [];

  const redis = await connectRedisIfThere();
  const prefix = uniquePrefix('bh-bench-overhead');
  const started: { redisService?: Service } = {};
  let keysSeen = 0;
  // On success and on failure alike: the service stops first, so nothing writes after the delete.
  let dropping: Promise<number> | undefined;
  const dropRedisKeys = () =>
    (dropping ??= (async () => {
      await started.redisService?.stop();
      await deleteKeysUnder(redis!, prefix);
      const left = (await keysUnder(redis!, prefix)).length;
      await redis!.quit();
      return left;
    })());
  if (redis) onCleanup(async () => void (await dropRedisKeys()));
  else {
    process.stdout.write(`overhead: no Redis answers at ${SHARED_REDIS_URL}: the Redis comparison is skipped\n`);
  }

  // Every process up before the first run; started together, start-up is not measured.
  const [bare, app, memory, withRedis] = await Promise.all([
    startBenchApp('bare'),
    startBenchApp('app', config(key, { kind: 'memory' })),
    startService(config(key, { kind: 'memory' }), { name: 'service (memory)' }),
    redis
      ? startService(config(key, { kind: 'redis', url: SHARED_REDIS_URL, prefix }), { name: 'service (redis)' }).then(
          (service) => (started.redisService = service),
        )
      : Promise.resolve(undefined),
  ]);

  const fromApp = (side: Side, benchApp: BenchApp, path: string): Target => ({
    side,
    url: benchApp.url(path),
    cpuUs: () => benchApp.cpuUs(),
  });
  const fromService = (side: Side, service: Service): Target => ({
    side,
    url: service.url('/v1/tools/echo/invoke'),
    cpuUs: async () => (await service.cpuSeconds()) * 1e6,
  });
  const targets: Partial<Record<Side, Target>> = {
    bare: fromApp('bare', bare, BARE_PATH),
    memory: fromService('memory', memory),
    interceptor: fromApp('interceptor', app, INTERCEPTOR_PATH),
    policies: fromApp('policies', app, POLICIES_PATH),
  };
  if (withRedis) targets.redis = fromService('redis', withRedis);

  // Probes: every side answers, and each goes the whole way it should.
  const probe = async (target: Target, expect: (answer: Answer) => string | undefined) => {
    const answer = await call(target.url, { method: 'POST', headers: key.headers, body: BODY });
    const problem = answer.status !== 200 ? `answered ${answer.status}: ${answer.text}` : expect(answer);
    if (problem) throw new Error(`probe of ${SIDES[target.side]}: ${problem}`);
  };
  const pipelineProbe = (answer: Answer) => {
    const body = JSON.parse(answer.text) as { toolId?: string; lane?: string; pool?: string; attempts?: number };
    if (body.toolId !== 'echo' || body.lane !== TOOL_LANE || body.pool !== 'normal' || body.attempts !== 1) {
      return `not a call of echo in lane ${TOOL_LANE}, pool normal, one attempt: ${answer.text}`;
    }
    if (!answer.headers['ratelimit'] || !answer.headers['ratelimit-policy']) return 'no RateLimit headers';
    return undefined;
  };
  await probe(targets.bare!, (answer) => (answer.text === '{"ok":true}' ? undefined : `answered ${answer.text}`));
  await probe(targets.memory!, pipelineProbe);
  if (targets.redis) await probe(targets.redis, pipelineProbe);
  await probe(targets.interceptor!, () => undefined);
  await probe(targets.policies!, (answer) =>
    answer.headers['x-call-id'] ? undefined : 'no X-Call-Id: the route policy did not run',
  );

  process.stdout.write(
    `overhead: ${s.pairs} rounds of ${s.durationS} s runs, ${s.connections} connections; ` +
      `rounds of (bare, memory${targets.redis ? ', redis' : ''}), then pairs of (interceptor, policies)\n` +
      `node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()
        .map((load) => load.toFixed(2))
        .join(' ')}\n`,
  );

  const ownCpuUs = () => {
    const { user, system } = process.cpuUsage();
    return user + system;
  };
  const load = (target: Target, durationS: number) =>
    runLoad({ url: target.url, connections: s.connections, durationS, headers: key.headers, body: BODY });

  const measure = async (target: Target, round: number): Promise<Run> => {
    const serverBefore = await target.cpuUs();
    const ownBefore = ownCpuUs();
    const result = await load(target, s.durationS);
    const ownAfter = ownCpuUs();
    const serverAfter = await target.cpuUs();
    const run: Run = {
      side: target.side,
      round,
      ...result,
      serverCpuUsPerCall: (serverAfter - serverBefore) / result.ok,
      serverCores: (serverAfter - serverBefore) / 1e6 / result.durationS,
      loadGeneratorCores: (ownAfter - ownBefore) / 1e6 / result.durationS,
    };
    if (run.ok === 0 || run.non2xx + run.errors > 0) {
      problems.push(
        `${SIDES[run.side]} round ${round}: ${run.ok} answered 2xx, ${run.non2xx} non-2xx ${JSON.stringify(run.statuses)}, ${run.errors} errors`,
      );
    }
    process.stdout.write(
      `  round ${round} ${target.side.padEnd(11)}: ${fixed(run.reqPerS, 0)} req/s, p50 ${fixed(run.p50Ms)} ms, ` +
        `p99 ${fixed(run.p99Ms)} ms; server ${fixed(run.serverCpuUsPerCall, 1)} µs CPU/call, ${fixed(run.serverCores)} cores; ` +
        `load generator ${fixed(run.loadGeneratorCores)} cores` +
        `${run.non2xx + run.errors ? `; ${run.non2xx} non-2xx, ${run.errors} errors` : ''}\n`,
    );
    return run;
  };

  // Warm-up, not measured: every side's code paths compiled before the first round.
  for (const target of Object.values(targets)) await load(target, s.quick ? 0.3 : WARM_UP_S);

  const threeWay = [targets.bare!, targets.memory!, ...(targets.redis ? [targets.redis] : [])];
  const runs: Run[] = [];
  for (let round = 1; round <= s.pairs; round++) {
    for (const target of threeWay) runs.push(await measure(target, round));
  }
  for (let round = 1; round <= s.pairs; round++) {
    for (const target of [targets.interceptor!, targets.policies!]) runs.push(await measure(target, round));
  }

  // In the app process: the built service's modules, the same code as dist/main.js serves.
  const profiles: Array<{ what: string } & ReturnType<typeof summariseProfile>> = [];
  if (s.profile) {
    const profiled: Array<[string, string]> = [
      ['full pipeline on echo (memory store)', '/v1/tools/echo/invoke'],
      ['route with @Bulkhead + @CircuitBreaker', POLICIES_PATH],
    ];
    for (const [what, path] of profiled) {
      const target: Target = { side: 'memory', url: app.url(path), cpuUs: () => app.cpuUs() };
      await app.startProfile();
      const result = await load(target, s.quick ? 1 : PROFILE_S);
      profiles.push({ what, ...summariseProfile(await app.stopProfile(), result) });
    }
  }

  // What the servers counted: every call went the whole way.
  const okOf = (side: Side) => runs.filter((run) => run.side === side).reduce((sum, run) => sum + run.ok, 0);
  const counted: Record<string, unknown> = {
    memory: checkPipeline(await memory.metrics(), SIDES.memory, okOf('memory'), key.tenant, problems),
  };
  if (withRedis) {
    counted.redis = checkPipeline(await withRedis.metrics(), SIDES.redis, okOf('redis'), key.tenant, problems);
  }
  const circuits = await call(app.url('/v1/circuits'), { headers: key.headers });
  counted.policies = checkRoutePolicies(
    parsePromText((await call(app.url('/metrics'))).text),
    (JSON.parse(circuits.text) as { circuits?: Record<string, CircuitSnapshot> }).circuits?.[POLICY_BREAKER],
    okOf('policies'),
    problems,
  );

  // Stop everything, then the Redis keys: present while the service ran, none left after.
  await Promise.all([bare.stop(), app.stop(), memory.stop(), withRedis?.stop()]);
  if (redis) {
    keysSeen = (await keysUnder(redis, prefix)).length;
    if (keysSeen === 0) problems.push('the Redis store wrote no key under its prefix');
  }

  const summaries = COMPARISONS.filter((comparison) => targets[comparison.b]).map((comparison) =>
    summarise(
      comparison,
      runs.filter((run) => run.side === comparison.a),
      runs.filter((run) => run.side === comparison.b),
    ),
  );

  printTable(
    'median (min-max) over the runs; B/A per round: median (min-max)',
    summaries.flatMap((summary) => [
      row(summary.comparison.name, `A: ${SIDES[summary.comparison.a]}`, summary.A),
      row(summary.comparison.name, `B: ${SIDES[summary.comparison.b]}`, summary.B),
      {
        comparison: summary.comparison.name,
        side: 'B/A per round',
        'req/s': range(summary.ratios.reqPerS, 3),
        'p50 ms': range(summary.ratios.p50Ms, 3),
        'p99 ms': range(summary.ratios.p99Ms, 3),
        'CPU µs/call': range(summary.ratios.serverCpuUsPerCall, 3),
      },
      {
        comparison: summary.comparison.name,
        side: 'B/A of medians',
        'req/s': fixed(summary.ofMedians.reqPerS, 3),
        'p50 ms': fixed(summary.ofMedians.p50Ms, 3),
        'p99 ms': fixed(summary.ofMedians.p99Ms, 3),
        'CPU µs/call': fixed(summary.ofMedians.serverCpuUsPerCall, 3),
      },
    ]),
  );
  const sides = [...new Set(runs.map((run) => run.side))];
  printTable(
    'CPU used during the runs, in cores (median)',
    sides.map((side) => {
      const of = runs.filter((run) => run.side === side);
      return {
        side: SIDES[side],
        server: fixed(median(of.map((run) => run.serverCores))),
        'load generator': fixed(median(of.map((run) => run.loadGeneratorCores))),
      };
    }),
  );
  printTable(
    'targets (req/s, B/A per round, median)',
    summaries.map((summary) => ({
      comparison: summary.comparison.name,
      'B/A': fixed(summary.ratios.reqPerS.median, 3),
      target: `>= ${summary.comparison.target}`,
      result: summary.met ? 'met' : 'NOT met',
    })),
  );
  if (!targets.redis) process.stdout.write('redis: skipped (no Redis at 127.0.0.1:6379)\n');
  for (const profile of profiles) {
    printTable(
      `CPU profile, ${profile.what}: ${profile.calls} calls in ${fixed(profile.durationS, 1)} s, ` +
        `${fixed(profile.busyUsPerCall, 1)} µs busy per call; top ${TOP_FRAMES} self-time frames`,
      profile.frames.slice(0, TOP_FRAMES).map((frame) => ({
        frame: frame.name,
        'self %': fixed(frame.percent, 1),
        'µs/call': fixed(frame.usPerCall, 1),
      })),
    );
    printTable(
      'self time by where the code lives (top 10)',
      profile.areas
        .slice(0, 10)
        .map((area) => ({ area: area.name, 'self %': fixed(area.percent, 1), 'µs/call': fixed(area.usPerCall, 1) })),
    );
  }

  const keysLeft = redis ? await dropRedisKeys() : undefined;
  if (keysLeft) problems.push(`${keysLeft} Redis keys left under ${prefix}`);
  process.stdout.write(
    `\nRedis keys under the run's prefix: ${redis ? `${keysSeen} at the end, ${keysLeft} after deleting` : 'n/a'}\n` +
      `checks: ${problems.length === 0 ? 'all passed' : problems.join('; ')}\n`,
  );

  if (s.quick) process.stdout.write('quick mode: results not written\n');
  else {
    const file = writeResults('overhead', {
      settings: { ...s, loadAverageAtStart: loadavg(), redis: targets.redis ? SHARED_REDIS_URL : null },
      sides: SIDES,
      summary: summaries,
      counted,
      redisKeys: { seen: keysSeen, left: keysLeft },
      profiles,
      checks: { problems },
      runs,
    });
    process.stdout.write(`wrote ${file}\n`);
  }
  if (problems.length > 0) process.exitCode = 1;
}

/** `--platforms`: the decorators' cost on each HTTP platform alone. */
async function platformsOnly(s: Settings): Promise<void> {
  const problems = await measurePlatforms(s);
  process.stdout.write(`checks: ${problems.length === 0 ? 'all passed' : problems.join('; ')}\n`);
  if (problems.length > 0) process.exitCode = 1;
}

const chosen = settings();
// Start-up and warm-up, the rounds (five runs each), the profile; half as much again for a slow machine.
const estimateMs = 12_000 + chosen.pairs * 5 * (chosen.durationS * 1_000 + 300) + (chosen.profile ? 8_000 : 0);
runMain('overhead', () => (chosen.platforms ? platformsOnly(chosen) : main(chosen)), {
  budgetMs: Math.max(BUDGET_MS, 1.5 * estimateMs),
});
