/**
 * Pool saturation benchmark (issue 4): does an isolated pool full of hung calls slow the
 * normal pool's calls? It compares the normal tenant's latency and throughput with and
 * without that load, as ratios measured in the same run.
 *
 * Usage (from the repository root):
 *   npm run bench -- pool-saturation [options]
 *   npm run bench:pool-saturation -- [options]
 *
 * Options:
 *   --pairs N        A/B pairs, alternated A B A B ... (default 4, at least 4)
 *   --duration S     seconds per measured run (default 2)
 *   --connections N  autocannon connections of the normal tenant (default 32)
 *   --hung N         concurrent callers of the contained tenant in phase B (default 40)
 *   --quick          1 pair of 0.5 s: does it still run? (no results written)
 *
 * Processes, all on loopback: the upstream (bench/support/upstream-server.ts: `/fast`
 * answers at once, `/hang` never until its connection closes); the service, `node
 * dist/main.js` with tenants `normal` and `contained`, http tools `fast` and `hang` in lanes
 * of their own (big enough not to limit), normal pool 32, isolated pool 2, egress to
 * 127.0.0.1/32 only, and the contained tenant set to `{ state: active, posture: degraded }`
 * through the admin route; a process of the contained tenant's `hang` callers; and this one,
 * autocannon calling `fast` as the normal tenant.
 *
 * Phase A: the normal tenant alone. Phase B: the same, while `--hung` callers of the contained
 * tenant keep the isolated pool saturated (2 calls hung at the upstream holding its permits,
 * up to 32 more waiting for a permit, the rest refused `queue_full` and retrying after the
 * Retry-After they get, as a well-behaved client does). Before each B run the bench waits
 * until the upstream holds exactly 2 hung calls and checks they are still held after it; after
 * each B run it disconnects the hung callers and waits until the pool is empty again. The
 * upstream's peak of hung calls is read over each measured run only: while the callers
 * disconnect, the upstream can see a queued call arrive before it has noticed the socket of the
 * aborted one close (a third call for an instant); the service's own `bulkhead_http_pool_peak`
 * of the isolated pool, reported at the end, covers the whole run.
 *
 * Latencies are the 2xx response times of every request, in fractional milliseconds. The
 * summary gives medians, min-max spread, and the ratio B/A both of the medians and per pair.
 * Prints a table and writes bench/results/pool-saturation.json. Exits 1 if saturation did not
 * hold or a normal call failed.
 */
import { cpus, loadavg } from 'node:os';
import { sampleValue } from '../test/support/prom-text';
import { pinToCpus } from './support/cpu';
import { alternate, type CallersStats, type LoadResult, runLoad, startCallersProcess } from './support/load';
import { runMain } from './support/processes';
import { fixed, printTable, range, type Stat, writeResults } from './support/report';
import { apiKey, startService, waitUntil } from './support/service';
import { pairedRatio, summary as seriesSummary } from './support/stats';
import { startUpstream } from './support/upstream-server';
import { option, QUICK_DURATION_S } from './support/options';

/** The whole run, start-up to clean-up, after the build. */
const BUDGET_MS = 75_000;
const WARMUP_S = 2;
const ISOLATED_MAX = 2;
const NORMAL_MAX = 32;

interface Run extends LoadResult {
  pair: number;
  phase: 'A' | 'B';
  /** The most `hang` calls open at the upstream at once during the run (0 in phase A). */
  hungPeakDuringRun: number;
  /** Phase B: hung calls held at the upstream before and after the run. */
  hungAtUpstream?: [number, number];
  /** Phase B: the isolated pool's active gauge before and after the run. */
  isolatedActive?: [number, number];
  /** Phase B: calls of the contained tenant refused so far in this phase. */
  containedRefused?: number;
}

const refused = (stats: CallersStats) => stats.answered['503'] ?? 0;

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const pairs = quick ? 1 : option('pairs', 4, 4);
  const durationS = quick ? QUICK_DURATION_S : option('duration', 2, 1);
  const connections = option('connections', 32, 1);
  const hung = option('hung', 40, ISOLATED_MAX + 1);
  // Start-up, warm-up, and per pair two runs plus saturating and emptying the isolated pool.
  const estimateMs = 8_000 + WARMUP_S * 1_000 + pairs * (2 * durationS * 1_000 + 1_500);
  if (estimateMs > BUDGET_MS) {
    throw new Error(
      `${pairs} pairs of ${durationS} s would take about ${estimateMs / 1000} s, over the ${BUDGET_MS / 1000} s budget`,
    );
  }

  const normal = apiKey('normal');
  const contained = apiKey('contained');
  const admin = apiKey('admin');
  const upstream = await startUpstream();
  const hangTool = {
    lane: 'hang',
    kind: 'http',
    url: upstream.url('/hang'),
    timeoutMs: 60_000,
    retry: { maxAttempts: 1 },
    // Hung calls end as the caller leaves, which a breaker does not count; keep it shut anyway.
    breaker: { volumeThreshold: 100_000, errorThresholdPercentage: 100 },
  };
  const service = await startService({
    server: { shutdownDrainMs: 2_000 },
    auth: { allowAnonymous: false, adminToken: admin.key, apiKeys: [normal.entry, contained.entry] },
    lanes: {
      fast: { concurrency: 256, queueCapacity: 1024 },
      hang: { concurrency: 256, queueCapacity: 1024, queueTtlMs: 60_000 },
    },
    tools: {
      fast: { lane: 'fast', kind: 'http', url: upstream.url('/fast'), timeoutMs: 10_000, retry: { maxAttempts: 1 } },
      hang: hangTool,
    },
    containment: {
      defaultPosture: 'degraded',
      pools: { normalMaxConcurrency: NORMAL_MAX, isolatedMaxConcurrency: ISOLATED_MAX, timeoutMs: 60_000 },
      egress: { allowHosts: ['127.0.0.1'], allowPrivateCidrs: ['127.0.0.1/32'] },
    },
  });
  const callers = await startCallersProcess();
  // The service on a CPU of its own, everything else on the other: what B may cost the normal
  // tenant is then the isolated pool's work inside the service, not the other processes' CPU.
  const pinning = pinToCpus([
    [service.child.process.pid, 1],
    [process.pid, 0],
    [upstream.child.process.pid, 0],
    [callers.pid, 0],
  ]);

  const containing = await service.call('/v1/admin/containment/contained', {
    method: 'PUT',
    headers: admin.headers,
    body: JSON.stringify({ state: 'active', posture: 'degraded', reason: 'pool saturation bench' }),
  });
  if (containing.status !== 200) {
    throw new Error(`containing the tenant answered ${containing.status}: ${containing.text}`);
  }

  // Each tenant's calls go where they should before anything is measured.
  const body = JSON.stringify({ arguments: {} });
  const poolOf = async (headers: Record<string, string>) => {
    const answer = await service.call('/v1/tools/fast/invoke', { method: 'POST', headers, body });
    return answer.status === 200
      ? (JSON.parse(answer.text) as { pool: string }).pool
      : `${answer.status} ${answer.text}`;
  };
  const routes = [await poolOf(normal.headers), await poolOf(contained.headers)];
  if (routes[0] !== 'normal' || routes[1] !== 'isolated') {
    throw new Error(`unexpected routing: normal -> ${routes[0]}; contained -> ${routes[1]}`);
  }

  const poolGauge = async (name: string, pool: string) =>
    sampleValue(await service.metrics(), name, { pool }) ?? Number.NaN;
  const isolatedActive = () => poolGauge('bulkhead_http_pool_active', 'isolated');
  const hungAtUpstream = async () => (await upstream.stats()).hang.inFlight;
  const hangLane = async () => (await service.lanes(contained.headers)).hang!.active;
  const measure = (seconds: number) =>
    runLoad({
      url: service.url('/v1/tools/fast/invoke'),
      connections,
      durationS: seconds,
      headers: normal.headers,
      body,
    });

  process.stdout.write(
    `pool saturation: ${pairs} A/B pairs of ${durationS} s, ${connections} connections (normal tenant -> fast), ` +
      `B adds ${hung} hung callers (contained tenant -> hang); isolated pool ${ISOLATED_MAX}, normal pool ${NORMAL_MAX}\n` +
      `node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()
        .map((load) => load.toFixed(2))
        .join(' ')}; ${pinning === 'pinned' ? 'the service pinned to CPU 1, the other processes to CPU 0' : pinning}\n`,
  );

  // Warm-up (JIT, the normal pool's connections); not measured.
  await measure(quick ? 0.5 : WARMUP_S);

  const run = async (pair: number, phase: 'A' | 'B'): Promise<Run> => {
    let before: [number, number] | undefined;
    if (phase === 'B') {
      await callers.start({
        url: service.url('/v1/tools/hang/invoke'),
        headers: contained.headers,
        body,
        callers: hung,
        pauseAfterRefusal: { retryAfter: { minMs: 100, maxMs: 1_000, fallbackMs: 1_000 } },
      });
      await waitUntil(`${ISOLATED_MAX} hung calls reach the upstream and the rest wait or are refused`, async () => {
        const inLane = await hangLane();
        return (await hungAtUpstream()) === ISOLATED_MAX && inLane + refused(await callers.stats()) >= hung;
      });
      before = [await hungAtUpstream(), await isolatedActive()];
    }
    await upstream.stats(true);
    const result: Run = { pair, phase, ...(await measure(durationS)), hungPeakDuringRun: 0 };
    result.hungPeakDuringRun = (await upstream.stats()).hang.peakInFlight;
    if (before) {
      result.hungAtUpstream = [before[0], await hungAtUpstream()];
      result.isolatedActive = [before[1], await isolatedActive()];
      result.containedRefused = refused(await callers.stop());
      await waitUntil('the hung calls are gone', async () => {
        const [atUpstream, active, inLane] = [await hungAtUpstream(), await isolatedActive(), await hangLane()];
        return atUpstream === 0 && active === 0 && inLane === 0;
      });
    }
    process.stdout.write(
      `  pair ${pair} ${phase}: p50 ${fixed(result.p50Ms)} ms, p99 ${fixed(result.p99Ms)} ms, ` +
        `${fixed(result.reqPerS, 0)} req/s${result.non2xx + result.errors ? `, ${result.non2xx} non-2xx, ${result.errors} errors` : ''}` +
        `; hung at upstream ${result.hungAtUpstream?.join('->') ?? 0} (peak ${result.hungPeakDuringRun})` +
        `${result.containedRefused === undefined ? '' : `, contained calls refused ${result.containedRefused}`}\n`,
    );
    return result;
  };
  const { a, b } = await alternate(
    (pair) => run(pair, 'A'),
    (pair) => run(pair, 'B'),
    pairs,
  );
  const runs = a.flatMap((runA, i) => [runA, b[i]!]);
  await callers.close();

  const prom = await service.metrics();
  const peaks = {
    isolatedPoolPeak: sampleValue(prom, 'bulkhead_http_pool_peak', { pool: 'isolated' }) ?? Number.NaN,
    normalPoolPeak: sampleValue(prom, 'bulkhead_http_pool_peak', { pool: 'normal' }) ?? Number.NaN,
  };

  const of = (phase: 'A' | 'B', pick: (run: Run) => number) => (phase === 'A' ? a : b).map(pick);
  const stat = seriesSummary;
  const phaseSummary = (phase: 'A' | 'B') => ({
    p50Ms: stat(of(phase, (r) => r.p50Ms)),
    p99Ms: stat(of(phase, (r) => r.p99Ms)),
    reqPerS: stat(of(phase, (r) => r.reqPerS)),
  });
  const summary = { A: phaseSummary('A'), B: phaseSummary('B') };
  const ratio = (key: 'p50Ms' | 'p99Ms' | 'reqPerS') => ({
    ofMedians: summary.B[key].median / summary.A[key].median,
    perPair: pairedRatio(
      of('A', (r) => r[key]),
      of('B', (r) => r[key]),
    ),
  });
  const ratios = { p99: ratio('p99Ms'), reqPerS: ratio('reqPerS'), p50: ratio('p50Ms') };
  const failures = runs.reduce((sum, run) => sum + run.non2xx + run.errors, 0);
  // B runs: exactly the isolated cap hung at the upstream throughout; A runs: none.
  const saturationHeld = runs.every((run) =>
    run.phase === 'A'
      ? run.hungPeakDuringRun === 0
      : run.hungPeakDuringRun === ISOLATED_MAX &&
        [...run.hungAtUpstream!, ...run.isolatedActive!].every((n) => n === ISOLATED_MAX),
  );

  const row = (phase: string, figures: { p50Ms: Stat; p99Ms: Stat; reqPerS: Stat }) => ({
    phase,
    'p50 ms': range(figures.p50Ms),
    'p99 ms': range(figures.p99Ms),
    'req/s': range(figures.reqPerS, 0),
  });
  printTable('normal tenant, median (min-max) over the runs of each phase', [
    row('A: normal alone', summary.A),
    row('B: isolated saturated', summary.B),
    {
      phase: 'B/A of medians',
      'p50 ms': fixed(ratios.p50.ofMedians, 3),
      'p99 ms': fixed(ratios.p99.ofMedians, 3),
      'req/s': fixed(ratios.reqPerS.ofMedians, 3),
    },
    {
      phase: 'B/A per pair',
      'p50 ms': range(ratios.p50.perPair, 3),
      'p99 ms': range(ratios.p99.perPair, 3),
      'req/s': range(ratios.reqPerS.perPair, 3),
    },
  ]);
  process.stdout.write(
    `\nsaturation held in every B run (and none in A): ${saturationHeld ? 'yes' : 'NO'}; ` +
      `isolated pool peak ${peaks.isolatedPoolPeak}, normal pool peak ${peaks.normalPoolPeak}; ` +
      `failed normal calls ${failures}\n`,
  );

  if (quick) process.stdout.write('quick mode: results not written\n');
  else {
    const file = writeResults('pool-saturation', {
      loadAverage: loadavg(),
      settings: {
        pairs,
        durationS,
        connections,
        hungCallers: hung,
        isolatedMaxConcurrency: ISOLATED_MAX,
        normalMaxConcurrency: NORMAL_MAX,
        pinning,
      },
      runs,
      summary,
      ratios,
      checks: { saturationHeld, failedNormalCalls: failures, ...peaks },
    });
    process.stdout.write(`wrote ${file}\n`);
  }
  if (!saturationHeld || failures > 0) process.exitCode = 1;
}

runMain('pool saturation bench', main, { budgetMs: BUDGET_MS });
