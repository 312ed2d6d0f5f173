/**
 * Pool saturation benchmark (issue 4): does an isolated pool full of hung calls slow the
 * normal pool's calls? It compares the normal tenant's latency and throughput with and
 * without that load, as ratios measured in the same run.
 *
 * Usage (from the repository root):
 *   npm run bench:pool-saturation
 *   npm run build && node -r ./test/support/swc-register.js bench/pool-saturation.ts [options]
 *
 * Options:
 *   --pairs N        A/B pairs, alternated A B A B ... (default 5, at least 4)
 *   --duration S     seconds per measured run (default 3)
 *   --connections N  autocannon connections of the normal tenant (default 32)
 *   --hung N         concurrent callers of the contained tenant in phase B (default 40)
 *
 * Three processes, all on loopback:
 *   - an upstream (this file run with --upstream): `/fast` answers 200 JSON at once, `/hang`
 *     never answers until its connection closes, `/stats` counts them (`?reset-peak` starts a
 *     new peak of hung calls);
 *   - the service, `node dist/main.js` (so build first) with BULKHEAD_CONFIG pointing to a
 *     temporary YAML: tenants `normal` and `contained` with API keys, http tools `fast` and
 *     `hang` in lanes of their own (big enough not to limit), normal pool 32, isolated pool 2,
 *     egress allowed to 127.0.0.1/32 only; after start the contained tenant is set to
 *     `{ state: active, posture: degraded }` through the admin route;
 *   - this process, the load generator: autocannon (programmatic API) for the normal tenant's
 *     `fast` calls, and a small client of its own for the contained tenant's `hang` calls.
 *
 * Phase A: the normal tenant alone. Phase B: the same, while `--hung` callers of the contained
 * tenant keep the isolated pool saturated (2 calls hung at the upstream holding its permits,
 * up to 32 more waiting for a permit, the rest refused `queue_full` and retrying after the
 * Retry-After it gets, as a well-behaved client does). Before each B run the bench waits
 * until the upstream holds exactly 2 hung calls and checks they are still held after it; after
 * each B run it disconnects the hung callers and waits until the pool is empty again. The
 * upstream's peak of hung calls is read over each measured run only: while the callers
 * disconnect, the upstream can see a queued call arrive before it has noticed the socket of the
 * aborted one close (a third call for an instant); the service's own `bulkhead_http_pool_peak`
 * of the isolated pool, reported at the end, covers the whole run.
 *
 * Latencies are the 2xx response times of every request (from autocannon's `response`
 * events, in fractional milliseconds). The machine may be shared and noisy: the summary gives
 * medians, min-max spread, and the ratio B/A both of the medians and per pair.
 * Prints a table and writes bench/results/pool-saturation.json. The whole run is bounded
 * (75 s, after the build) and every process it started is stopped on success, error, SIGINT and SIGTERM.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type ClientRequest, createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { createRequire } from 'node:module';
import { setTimeout as wait } from 'node:timers/promises';
import { parsePromText, sampleValue } from '../test/support/prom-text';

const ROOT = resolve(__dirname, '..');
const RESULTS_FILE = resolve(__dirname, 'results/pool-saturation.json');
const SWC_REGISTER = resolve(ROOT, 'test/support/swc-register.js');
/** The whole run, start-up to clean-up; `npm run bench:pool-saturation` builds first, in about 10 s more. */
const BUDGET_MS = 75_000;
const WARMUP_S = 2;
const ISOLATED_MAX = 2;
const NORMAL_MAX = 32;

// ---------------------------------------------------------------------------------------------
// The upstream process.

/** `/fast` answers at once, `/hang` never, `/stats` reports counts; exits when its parent goes. */
function runUpstream(): void {
  const stats = { fast: 0, hang: 0, hangInFlight: 0, hangPeak: 0 };
  const server = createServer((request, response) => {
    const path = request.url ?? '';
    if (path === '/stats' || path === '/stats?reset-peak') {
      if (path !== '/stats') stats.hangPeak = stats.hangInFlight;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stats));
      return;
    }
    if (path === '/hang') {
      stats.hang++;
      stats.hangInFlight++;
      stats.hangPeak = Math.max(stats.hangPeak, stats.hangInFlight);
      response.on('close', () => stats.hangInFlight--);
      request.resume();
      return;
    }
    stats.fast++;
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`UPSTREAM_PORT=${(server.address() as AddressInfo).port}\n`);
  });
  // The parent holds our stdin: when it goes, for whatever reason, so do we.
  process.stdin.resume();
  process.stdin.on('close', () => process.exit(0));
  process.stdin.on('end', () => process.exit(0));
}

// ---------------------------------------------------------------------------------------------
// Processes this bench starts, and stopping them.

interface Child {
  name: string;
  process: ChildProcess;
  output: string;
  exited: Promise<void>;
}

const children: Child[] = [];
const cleanups: Array<() => void | Promise<void>> = [];

function startChild(name: string, args: string[], env: Record<string, string>): Child {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const started: Child = {
    name,
    process: child,
    output: '',
    exited: new Promise<void>((done) => child.once('exit', () => done())),
  };
  // Keep only the tail: the service logs a line per start-up step, nothing per request.
  const keep = (chunk: Buffer) => (started.output = (started.output + chunk.toString()).slice(-20_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  children.push(started);
  return started;
}

async function stopChild(child: Child): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  child.process.kill('SIGTERM');
  child.process.stdin?.end();
  const gone = await Promise.race([child.exited.then(() => true), wait(5_000).then(() => false)]);
  if (!gone) {
    child.process.kill('SIGKILL');
    await child.exited;
  }
}

let cleaning: Promise<void> | undefined;
function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    for (const cleanup of cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch (error) {
        process.stderr.write(`cleanup: ${(error as Error).message}\n`);
      }
    }
    await Promise.all(children.map(stopChild));
  })();
  return cleaning;
}

// Last resort if the event loop is already going away: no child outlives us.
process.on('exit', () => {
  for (const child of children) {
    if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGKILL');
  }
});

function waitForLine(child: Child, pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  return new Promise((done, fail) => {
    const check = () => {
      const match = pattern.exec(child.output);
      if (match) {
        finish();
        done(match);
      }
    };
    const timer = setTimeout(() => {
      finish();
      fail(new Error(`${child.name} did not print ${pattern} within ${timeoutMs} ms:\n${child.output}`));
    }, timeoutMs);
    const onExit = () => {
      finish();
      fail(new Error(`${child.name} ended before printing ${pattern}:\n${child.output}`));
    };
    const finish = () => {
      clearTimeout(timer);
      child.process.stdout!.off('data', check);
      child.process.stderr!.off('data', check);
      child.process.off('exit', onExit);
    };
    child.process.stdout!.on('data', check);
    child.process.stderr!.on('data', check);
    child.process.once('exit', onExit);
    check();
  });
}

// ---------------------------------------------------------------------------------------------
// Small HTTP client for control requests (admin, metrics, stats): one connection each.

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  text: string;
}

function call(url: string, method = 'GET', headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return new Promise((done, fail) => {
    const request = httpRequest(url, { method, headers, agent: false, timeout: 5_000 }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => done({ status: response.statusCode ?? 0, headers: response.headers, text }));
      response.on('error', fail);
    });
    request.on('timeout', () => request.destroy(new Error(`${method} ${url} timed out`)));
    request.on('error', fail);
    request.end(body);
  });
}

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await wait(20);
  }
}

// ---------------------------------------------------------------------------------------------
// The contained tenant's hung callers.

/**
 * `callers` loops, each keeping one `hang` call open on a connection of its own. A refused
 * call (the isolated pool's queue is full) waits for its Retry-After (at most 1 s) and tries
 * again. `stop()` closes every connection, which aborts the calls in the service.
 */
class HungCallers {
  private stopped = false;
  private readonly open = new Set<ClientRequest>();
  private readonly sleepers = new Set<() => void>();
  private readonly loops: Array<Promise<void>> = [];
  /** Answers by status (a hung call has none until it is stopped). */
  readonly answered = new Map<number, number>();
  errors = 0;

  constructor(
    private readonly url: string,
    private readonly headers: Record<string, string>,
  ) {}

  start(callers: number): void {
    for (let n = 0; n < callers; n++) this.loops.push(this.loop());
  }

  /** Refusals so far (`queue_full` from the isolated pool). */
  get refused(): number {
    return this.answered.get(503) ?? 0;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const request of this.open) request.destroy();
    for (const wake of this.sleepers) wake();
    await Promise.all(this.loops);
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const retryAfterMs = await this.once();
      if (!this.stopped) await this.sleep(retryAfterMs);
    }
  }

  /** Waits `ms`, or less if stopped meanwhile. */
  private sleep(ms: number): Promise<void> {
    return new Promise<void>((wake) => {
      const done = () => {
        clearTimeout(timer);
        this.sleepers.delete(done);
        wake();
      };
      const timer = setTimeout(done, ms);
      this.sleepers.add(done);
    });
  }

  /** One call; resolves with how long to wait before the next one. */
  private once(): Promise<number> {
    return new Promise((done) => {
      const request = httpRequest(
        this.url,
        { method: 'POST', headers: this.headers, agent: false },
        (response: IncomingMessage) => {
          const status = response.statusCode ?? 0;
          this.answered.set(status, (this.answered.get(status) ?? 0) + 1);
          const retryAfterS = Number(response.headers['retry-after']);
          response.resume();
          response.on('close', () => {
            this.open.delete(request);
            done(Number.isFinite(retryAfterS) ? Math.min(1_000, Math.max(100, retryAfterS * 1_000)) : 1_000);
          });
        },
      );
      request.on('error', () => {
        this.open.delete(request);
        if (!this.stopped) this.errors++;
        done(200);
      });
      this.open.add(request);
      request.end(JSON.stringify({ arguments: {} }));
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Measuring.

interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  latency: { p50: number; p99: number };
  requests: { average: number; total: number };
}

interface AutocannonInstance {
  on(event: 'response', listener: (client: unknown, status: number, bytes: number, ms: number) => void): void;
  stop(): void;
}

type Autocannon = (
  options: Record<string, unknown>,
  done: (error: Error | null, result: AutocannonResult) => void,
) => AutocannonInstance;

// autocannon ships no types; this is the part of its programmatic API the bench uses.
const autocannon = createRequire(__filename)('autocannon') as Autocannon;

interface Run {
  pair: number;
  phase: 'A' | 'B';
  p50Ms: number;
  p99Ms: number;
  reqPerS: number;
  ok: number;
  non2xx: number;
  errors: number;
  /** autocannon's own p99, from its histogram (for comparison). */
  autocannonP99Ms: number;
  /** The most `hang` calls open at the upstream at once during the run (0 in phase A). */
  hungPeakDuringRun: number;
  /** Phase B: hung calls held at the upstream before and after the run. */
  hungAtUpstream?: [number, number];
  /** Phase B: the isolated pool's active gauge before and after the run. */
  isolatedActive?: [number, number];
  /** Phase B: calls of the contained tenant refused so far in this phase. */
  containedRefused?: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))]!;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function spread(values: number[]) {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

let current: AutocannonInstance | undefined;

function measure(url: string, key: string, connections: number, durationS: number) {
  return new Promise<{ result: AutocannonResult; latencies: number[] }>((done, fail) => {
    const latencies: number[] = [];
    const instance = autocannon(
      {
        url,
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ arguments: {} }),
        connections,
        duration: durationS,
        timeout: 10,
      },
      (error, result) => {
        current = undefined;
        if (error) fail(error);
        else done({ result, latencies });
      },
    );
    current = instance;
    instance.on('response', (_client, status, _bytes, ms) => {
      if (status >= 200 && status < 300) latencies.push(ms);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// The run.

function option(name: string, fallback: number, min: number): number {
  const index = process.argv.indexOf(`--${name}`);
  if (index === -1) return fallback;
  const value = Number(process.argv[index + 1]);
  if (!Number.isInteger(value) || value < min) throw new Error(`--${name} must be an integer of at least ${min}`);
  return value;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const fixed = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

async function main(): Promise<void> {
  const pairs = option('pairs', 5, 4);
  const durationS = option('duration', 3, 1);
  const connections = option('connections', 32, 1);
  const hung = option('hung', 40, ISOLATED_MAX + 1);
  // Start-up, warm-up, and per pair two runs plus saturating and emptying the isolated pool.
  const estimateMs = 8_000 + WARMUP_S * 1_000 + pairs * (2 * durationS * 1_000 + 1_500);
  if (estimateMs > BUDGET_MS) {
    throw new Error(
      `${pairs} pairs of ${durationS} s would take about ${estimateMs / 1000} s, over the ${BUDGET_MS / 1000} s budget`,
    );
  }
  const entry = resolve(ROOT, 'dist/main.js');
  if (!existsSync(entry)) throw new Error('dist/main.js is missing: run `npm run build` first');

  const normalKey = `normal-${randomBytes(16).toString('hex')}`;
  const containedKey = `contained-${randomBytes(16).toString('hex')}`;
  const adminToken = randomBytes(24).toString('hex');

  const upstream = startChild('upstream', ['-r', SWC_REGISTER, __filename, '--upstream'], {});
  const upstreamPort = Number((await waitForLine(upstream, /UPSTREAM_PORT=(\d+)/, 15_000))[1]);
  const upstreamBase = `http://127.0.0.1:${upstreamPort}`;

  const dir = mkdtempSync(resolve(tmpdir(), 'bulkhead-bench-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const configFile = resolve(dir, 'bench.yaml');
  writeFileSync(
    configFile,
    [
      'server: { port: 0, host: 127.0.0.1, shutdownDrainMs: 2000 }',
      'auth:',
      '  allowAnonymous: false',
      `  adminToken: "${adminToken}"`,
      '  apiKeys:',
      `    - { sha256: "${sha256(normalKey)}", tenant: normal }`,
      `    - { sha256: "${sha256(containedKey)}", tenant: contained }`,
      'lanes:',
      '  fast: { concurrency: 256, queueCapacity: 1024 }',
      '  hang: { concurrency: 256, queueCapacity: 1024, queueTtlMs: 60000 }',
      'tools:',
      `  fast: { lane: fast, kind: http, url: "${upstreamBase}/fast", timeoutMs: 10000, retry: { maxAttempts: 1 } }`,
      '  hang:',
      '    lane: hang',
      '    kind: http',
      `    url: "${upstreamBase}/hang"`,
      '    timeoutMs: 60000',
      '    retry: { maxAttempts: 1 }',
      // Hung calls end as the caller leaves, which a breaker does not count; keep it shut anyway.
      '    breaker: { volumeThreshold: 100000, errorThresholdPercentage: 100 }',
      'containment:',
      '  defaultPosture: degraded',
      `  pools: { normalMaxConcurrency: ${NORMAL_MAX}, isolatedMaxConcurrency: ${ISOLATED_MAX}, timeoutMs: 60000 }`,
      '  egress: { allowHosts: ["127.0.0.1"], allowPrivateCidrs: ["127.0.0.1/32"] }',
      '',
    ].join('\n'),
  );

  const service = startChild('service', [entry], { BULKHEAD_CONFIG: configFile });
  const port = Number((await waitForLine(service, /listening on http:\/\/127\.0\.0\.1:(\d+)/, 20_000))[1]);
  const base = `http://127.0.0.1:${port}`;
  const asAdmin = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
  const asNormal = { authorization: `Bearer ${normalKey}`, 'content-type': 'application/json' };
  const asContained = { authorization: `Bearer ${containedKey}`, 'content-type': 'application/json' };

  const contained = await call(
    `${base}/v1/admin/containment/contained`,
    'PUT',
    asAdmin,
    JSON.stringify({ state: 'active', posture: 'degraded', reason: 'pool saturation bench' }),
  );
  if (contained.status !== 200)
    throw new Error(`containing the tenant answered ${contained.status}: ${contained.text}`);

  // Each tenant's calls go where they should before anything is measured.
  const invokeBody = JSON.stringify({ arguments: {} });
  const probeNormal = await call(`${base}/v1/tools/fast/invoke`, 'POST', asNormal, invokeBody);
  const probeContained = await call(`${base}/v1/tools/fast/invoke`, 'POST', asContained, invokeBody);
  const poolOf = (answer: Answer) => (answer.status === 200 ? (JSON.parse(answer.text) as { pool: string }).pool : '');
  if (poolOf(probeNormal) !== 'normal' || poolOf(probeContained) !== 'isolated') {
    throw new Error(
      `unexpected routing: normal ${probeNormal.status} ${probeNormal.text}; contained ${probeContained.status} ${probeContained.text}`,
    );
  }

  const upstreamStats = async (resetPeak = false) =>
    JSON.parse((await call(`${upstreamBase}/stats${resetPeak ? '?reset-peak' : ''}`)).text) as {
      fast: number;
      hang: number;
      hangInFlight: number;
      hangPeak: number;
    };
  const metrics = async () => parsePromText((await call(`${base}/metrics`)).text);
  const poolGauge = async (name: string, pool: string) => sampleValue(await metrics(), name, { pool }) ?? Number.NaN;
  const hangLane = async () => {
    const answer = await call(`${base}/v1/lanes`, 'GET', asContained);
    return (JSON.parse(answer.text) as { lanes: Record<string, { active: number }> }).lanes.hang!.active;
  };

  const invokeFast = `${base}/v1/tools/fast/invoke`;
  process.stdout.write(
    `pool saturation: ${pairs} A/B pairs of ${durationS} s, ${connections} connections (normal tenant -> fast), ` +
      `B adds ${hung} hung callers (contained tenant -> hang); isolated pool ${ISOLATED_MAX}, normal pool ${NORMAL_MAX}\n` +
      `node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()
        .map((load) => load.toFixed(2))
        .join(' ')}\n`,
  );

  // Warm-up (JIT, the normal pool's connections); not measured.
  await measure(invokeFast, normalKey, connections, WARMUP_S);

  const runs: Run[] = [];
  for (let pair = 1; pair <= pairs; pair++) {
    for (const phase of ['A', 'B'] as const) {
      let callers: HungCallers | undefined;
      let before: [number, number] | undefined;
      if (phase === 'B') {
        callers = new HungCallers(`${base}/v1/tools/hang/invoke`, asContained);
        const started = callers;
        cleanups.push(() => started.stop());
        callers.start(hung);
        await waitUntil(`${ISOLATED_MAX} hung calls reach the upstream and the rest wait or are refused`, async () => {
          const atUpstream = (await upstreamStats()).hangInFlight;
          const inLane = await hangLane();
          return atUpstream === ISOLATED_MAX && inLane + started.refused >= hung;
        });
        before = [(await upstreamStats()).hangInFlight, await poolGauge('bulkhead_http_pool_active', 'isolated')];
      }
      await upstreamStats(true);
      const { result, latencies } = await measure(invokeFast, normalKey, connections, durationS);
      latencies.sort((a, b) => a - b);
      const run: Run = {
        pair,
        phase,
        p50Ms: percentile(latencies, 50),
        p99Ms: percentile(latencies, 99),
        reqPerS: latencies.length / result.duration,
        ok: latencies.length,
        non2xx: result.non2xx,
        errors: result.errors,
        autocannonP99Ms: result.latency.p99,
        hungPeakDuringRun: (await upstreamStats()).hangPeak,
      };
      if (callers && before) {
        const after: [number, number] = [
          (await upstreamStats()).hangInFlight,
          await poolGauge('bulkhead_http_pool_active', 'isolated'),
        ];
        run.hungAtUpstream = [before[0], after[0]];
        run.isolatedActive = [before[1], after[1]];
        run.containedRefused = callers.refused;
        await callers.stop();
        await waitUntil('the hung calls are gone', async () => {
          const atUpstream = (await upstreamStats()).hangInFlight;
          const active = await poolGauge('bulkhead_http_pool_active', 'isolated');
          return atUpstream === 0 && active === 0 && (await hangLane()) === 0;
        });
      }
      runs.push(run);
      process.stdout.write(
        `  pair ${pair} ${phase}: p50 ${fixed(run.p50Ms)} ms, p99 ${fixed(run.p99Ms)} ms, ` +
          `${fixed(run.reqPerS, 0)} req/s${run.non2xx + run.errors ? `, ${run.non2xx} non-2xx, ${run.errors} errors` : ''}` +
          `; hung at upstream ${run.hungAtUpstream?.join('->') ?? 0} (peak ${run.hungPeakDuringRun})` +
          `${run.containedRefused === undefined ? '' : `, contained calls refused ${run.containedRefused}`}\n`,
      );
    }
  }

  const prom = await metrics();
  const peaks = {
    isolatedPoolPeak: sampleValue(prom, 'bulkhead_http_pool_peak', { pool: 'isolated' }) ?? Number.NaN,
    normalPoolPeak: sampleValue(prom, 'bulkhead_http_pool_peak', { pool: 'normal' }) ?? Number.NaN,
  };

  const of = (phase: 'A' | 'B', pick: (run: Run) => number) => runs.filter((run) => run.phase === phase).map(pick);
  const pairwise = (pick: (run: Run) => number) =>
    Array.from({ length: pairs }, (_, n) => {
      const [a, b] = [runs[2 * n]!, runs[2 * n + 1]!];
      return pick(b) / pick(a);
    });
  const summary = {
    A: {
      p50Ms: spread(of('A', (r) => r.p50Ms)),
      p99Ms: spread(of('A', (r) => r.p99Ms)),
      reqPerS: spread(of('A', (r) => r.reqPerS)),
    },
    B: {
      p50Ms: spread(of('B', (r) => r.p50Ms)),
      p99Ms: spread(of('B', (r) => r.p99Ms)),
      reqPerS: spread(of('B', (r) => r.reqPerS)),
    },
  };
  const ratios = {
    p99: {
      ofMedians: summary.B.p99Ms.median / summary.A.p99Ms.median,
      perPair: spread(pairwise((r) => r.p99Ms)),
    },
    reqPerS: {
      ofMedians: summary.B.reqPerS.median / summary.A.reqPerS.median,
      perPair: spread(pairwise((r) => r.reqPerS)),
    },
    p50: {
      ofMedians: summary.B.p50Ms.median / summary.A.p50Ms.median,
      perPair: spread(pairwise((r) => r.p50Ms)),
    },
  };
  const failures = runs.reduce((sum, run) => sum + run.non2xx + run.errors, 0);
  // B runs: exactly the isolated cap hung at the upstream throughout; A runs: none.
  const saturationHeld = runs.every((run) =>
    run.phase === 'A'
      ? run.hungPeakDuringRun === 0
      : run.hungPeakDuringRun === ISOLATED_MAX &&
        [...run.hungAtUpstream!, ...run.isolatedActive!].every((n) => n === ISOLATED_MAX),
  );

  const range = (s: { median: number; min: number; max: number }, digits = 2) =>
    `${fixed(s.median, digits)} (${fixed(s.min, digits)}-${fixed(s.max, digits)})`;
  const rows = [
    ['', 'p50 ms', 'p99 ms', 'req/s'],
    ['A: normal alone', range(summary.A.p50Ms), range(summary.A.p99Ms), range(summary.A.reqPerS, 0)],
    ['B: isolated saturated', range(summary.B.p50Ms), range(summary.B.p99Ms), range(summary.B.reqPerS, 0)],
    [
      'B/A of medians',
      fixed(ratios.p50.ofMedians, 3),
      fixed(ratios.p99.ofMedians, 3),
      fixed(ratios.reqPerS.ofMedians, 3),
    ],
    ['B/A per pair', range(ratios.p50.perPair, 3), range(ratios.p99.perPair, 3), range(ratios.reqPerS.perPair, 3)],
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  process.stdout.write('\nmedian (min-max) over the runs of each phase\n');
  for (const row of rows) process.stdout.write(`${row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ')}\n`);
  process.stdout.write(
    `\nsaturation held in every B run (and none in A): ${saturationHeld ? 'yes' : 'NO'}; ` +
      `isolated pool peak ${peaks.isolatedPoolPeak}, normal pool peak ${peaks.normalPoolPeak}; ` +
      `failed normal calls ${failures}\n`,
  );

  mkdirSync(resolve(__dirname, 'results'), { recursive: true });
  writeFileSync(
    RESULTS_FILE,
    `${JSON.stringify(
      {
        bench: 'pool-saturation',
        at: new Date().toISOString(),
        node: process.version,
        cpus: cpus().length,
        loadAverage: loadavg(),
        settings: {
          pairs,
          durationS,
          connections,
          hungCallers: hung,
          isolatedMaxConcurrency: ISOLATED_MAX,
          normalMaxConcurrency: NORMAL_MAX,
        },
        runs,
        summary,
        ratios,
        checks: { saturationHeld, failedNormalCalls: failures, ...peaks },
      },
      null,
      2,
    )}\n`,
  );
  process.stdout.write(`wrote ${RESULTS_FILE}\n`);
  if (!saturationHeld || failures > 0) process.exitCode = 1;
}

if (process.argv.includes('--upstream')) {
  runUpstream();
} else {
  const deadline = setTimeout(() => {
    process.stderr.write(`pool saturation bench: over its ${BUDGET_MS / 1000} s budget; stopping\n`);
    process.exitCode = 1;
    void cleanUp().then(() => process.exit(1));
  }, BUDGET_MS);
  deadline.unref();
  cleanups.push(() => current?.stop());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\n${signal}: stopping\n`);
      void cleanUp().then(() => process.exit(130));
    });
  }
  main()
    .catch((error: unknown) => {
      process.stderr.write(`pool saturation bench failed: ${(error as Error).message ?? String(error)}\n`);
      process.exitCode = 1;
    })
    .finally(() => cleanUp().then(() => clearTimeout(deadline)));
}
