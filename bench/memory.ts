/**
 * Memory benchmark (issue 6 item 5): what a waiting call costs in heap, and whether refusing
 * calls over HTTP makes the service grow.
 *
 * Usage (from the repository root; builds dist/ first if it is missing):
 *   node -r ./test/support/swc-register.js bench/memory.ts [--calls N] [--quick]
 *
 * Options:
 *   --calls N   rejected HTTP calls in part 2 (default 200,000, in 4 equal chunks)
 *   --quick     20,000 queued calls in part 1, 20,000 HTTP calls in part 2: about 20 s, for CI
 *
 * It needs --expose-gc: without the flag it starts itself again with it (and stops that
 * process if it is stopped).
 *
 * Part 1, heap per queued call, in this process: one call runs and never settles, 100,000
 * more wait behind it; heap used after a forced GC, minus before, divided by 100,000 is the
 * bytes one waiting call holds (whatever the caller keeps, its promise, is counted once, in a
 * slot of an array allocated before the measurement). Rows:
 *   - pending promise: `new Promise(() => {})`, the baseline; every row is also given as a
 *     ratio to it;
 *   - promise + its resolvers: the least any queue must hold (a promise to hand out and the
 *     functions that settle it);
 *   - lane: concurrency 1, queueCapacity 100,000, with the SystemClock the service runs with,
 *     so each waiting call has armed its queue-TTL timer (a Node Timeout and its callback);
 *   - lane, no TTL timers: the same with a clock whose timers are no-ops: the lane's own share;
 *   - the same 100,000 waiting in cockatiel 3's `bulkhead(1, 100000)`, p-limit(1) and a
 *     hand-written async/await semaphore, for comparison.
 * Also given: drain ms, from releasing the running call until all 100,000 have run. An array
 * FIFO's `shift()` copies the whole array once it is too big for V8 to trim in place (over
 * 128 kB, about 32,000 entries), so draining a queue that long is quadratic there.
 *
 * Part 2, RSS growth across rejected HTTP calls: the built service (`node dist/main.js`) runs
 * with BULKHEAD_CONFIG pointing to a temporary YAML: one API key, a lane `held` of concurrency
 * 1 and queue 0, a builtin `delay` tool `hold` in it. One call `{ ms: 600000 }` holds the lane
 * for the whole run; then autocannon (programmatic API, 32 keep-alive connections, in this
 * process) fires the rejected calls, every one of which must answer 503 `queue_full`. The
 * service's RSS is read from /proc/<pid>/status (VmRSS; VmHWM is the peak) before the first
 * call after 1 s of quiet, after each chunk after 0.5 s, and at the end after 2 s; nothing but
 * the calls makes it collect garbage meanwhile. The rejected calls get at most 30 s in all (a
 * busy machine fires fewer, and says so). Figures:
 *   - RSS growth in MB from the first reading to the last: the issue's figure (target < 10 MB),
 *     per chunk too, so a one-off warm-up (JIT, pools) can be told from a steady climb. It also
 *     follows V8's heap sizing, which lets garbage pile up before collecting it: from one run
 *     to the next it moves by tens of MB with no leak at all. Hence:
 *   - the leak check, on the service warmed up by then: a full GC, 25,000 more rejected calls
 *     (5,000 with --quick; at most 5 s), a full GC. Both GCs are forced over the service's
 *     inspector (started on a free loopback port; the service itself exposes nothing new),
 *     which also reports heap used. Heap used after, minus before, per call is what each
 *     refusal leaves behind, whatever the GC's timing; RSS before and after is given too.
 *
 * Prints tables and writes bench/results/memory.json. Bounded: 60 s after the build, and
 * every process it started is stopped on success, error, SIGINT and SIGTERM.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type ClientRequest, request as httpRequest } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { setTimeout as wait } from 'node:timers/promises';
import { getHeapStatistics } from 'node:v8';
import { bulkhead } from 'cockatiel';
import pLimit from 'p-limit';
import { WebSocket } from 'undici';
import type { Clock } from '../src/common';
import { built } from './support/built';
import { printTable, writeResults } from './support/report';
import { option } from './support/options';
import { Semaphore } from './support/semaphore';

const { Lane } = built<typeof import('../src/bulkhead/lane')>('bulkhead/lane');
const { SystemClock } = built<typeof import('../src/common')>('common');

const ROOT = resolve(__dirname, '..');
const QUICK = process.argv.includes('--quick');
/** Waiting calls in part 1 (fewer with --quick, where array FIFOs still drain in linear time). */
const QUEUED = QUICK ? 20_000 : 100_000;
const CHUNKS = 4;
const CONNECTIONS = 32;
const BUDGET_MS = 60_000;
const TARGET_RSS_GROWTH_MB = 10;
/** The most the rejected calls may take, all chunks together, so the run stays bounded. */
const FIRING_BUDGET_MS = 30_000;
/** The most the leak check's calls may take. */
const LEAK_CHECK_BUDGET_MS = 5_000;
const RESPAWNED = 'BULKHEAD_BENCH_RESPAWNED';
const MB = 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// Part 1: heap per queued call.

function forceGc(): void {
  const gc = (globalThis as { gc?: () => void }).gc!;
  gc();
  gc();
}

const usedHeap = () => getHeapStatistics().used_heap_size;
const immediate = () => 1;
const noop = () => undefined;

/** A clock whose timers never fire: what the lane itself holds, without its TTL timers. */
class NoTimerClock implements Clock {
  private readonly system = new SystemClock();
  now = () => this.system.now();
  wallNow = () => this.system.wallNow();
  setTimer = () => undefined;
  clearTimer = noop;
}

/** A call that runs until `release()`: what keeps the limiter full while the others wait. */
function holder() {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  return { task: () => held, release };
}

interface Filler {
  name: string;
  /**
   * Puts QUEUED waiting calls in `slots` (and `extra`, if it needs a second reference per
   * call); returns what settles them all.
   */
  fill(slots: unknown[], extra: unknown[]): () => Promise<unknown>;
}

function laneFiller(name: string, clock: Clock): Filler {
  return {
    name,
    fill: (slots) => {
      const lane = new Lane({ name: 'queued', concurrency: 1, queueCapacity: QUEUED, clock });
      const running = holder();
      lane.run(running.task);
      for (let i = 0; i < QUEUED; i++) slots[i] = lane.run(immediate);
      const { active, waiting } = lane.snapshot();
      if (active !== 1 || waiting !== QUEUED) throw new Error(`${name}: ${active} running, ${waiting} waiting`);
      return () => {
        running.release();
        return lane.whenIdle();
      };
    },
  };
}

const FILLERS: Filler[] = [
  {
    name: 'pending promise (baseline)',
    fill: (slots) => {
      for (let i = 0; i < QUEUED; i++) slots[i] = new Promise(noop);
      return () => Promise.resolve();
    },
  },
  {
    name: 'promise + its resolvers',
    fill: (slots, extra) => {
      for (let i = 0; i < QUEUED; i++) slots[i] = new Promise((resolve) => (extra[i] = resolve));
      return () => Promise.resolve();
    },
  },
  laneFiller('lane', new SystemClock()),
  laneFiller('lane, no TTL timers', new NoTimerClock()),
  {
    name: `cockatiel bulkhead(1, ${QUEUED})`,
    fill: (slots) => {
      const policy = bulkhead(1, QUEUED);
      const running = holder();
      void policy.execute(running.task);
      for (let i = 0; i < QUEUED; i++) slots[i] = policy.execute(immediate);
      return () => {
        running.release();
        return Promise.all(slots);
      };
    },
  },
  {
    name: 'p-limit(1)',
    fill: (slots) => {
      const limit = pLimit(1);
      const running = holder();
      void limit(running.task);
      for (let i = 0; i < QUEUED; i++) slots[i] = limit(immediate);
      return () => {
        running.release();
        return Promise.all(slots);
      };
    },
  },
  {
    name: 'semaphore (async/await)',
    fill: (slots) => {
      const semaphore = new Semaphore(1);
      const running = holder();
      void semaphore.run(running.task);
      for (let i = 0; i < QUEUED; i++) slots[i] = semaphore.run(immediate);
      return () => {
        running.release();
        return Promise.all(slots);
      };
    },
  },
];

async function heapPerQueuedCall() {
  // Allocated once, before any measurement, so that no row pays for the array holding its calls.
  const slots = new Array<unknown>(QUEUED).fill(null);
  const extra = new Array<unknown>(QUEUED).fill(null);
  const rows: Array<{ name: string; bytesPerCall: number; drainMs: number }> = [];
  for (const filler of FILLERS) {
    forceGc();
    const before = usedHeap();
    const settle = filler.fill(slots, extra);
    // Let what a limiter does a microtask later (p-limit enqueues then) happen first.
    await new Promise((done) => setImmediate(done));
    forceGc();
    const after = usedHeap();
    const drainStarted = performance.now();
    await settle();
    const drainMs = performance.now() - drainStarted;
    rows.push({ name: filler.name, bytesPerCall: (after - before) / QUEUED, drainMs });
    slots.fill(null);
    extra.fill(null);
  }
  const baseline = rows[0]!.bytesPerCall;
  return rows.map((row) => ({ ...row, vsPendingPromise: row.bytesPerCall / baseline }));
}

// ---------------------------------------------------------------------------------------------
// Part 2: RSS of the service across rejected HTTP calls.

interface Started {
  child: ChildProcess;
  output: string;
  exited: Promise<void>;
}

const services: Started[] = [];
const cleanups: Array<() => void | Promise<void>> = [];

function startService(configFile: string): Started {
  // The inspector (loopback, a free port) is how the bench forces a full GC in the service
  // and reads its heap; the service itself exposes nothing new.
  const child = spawn(process.execPath, ['--inspect=127.0.0.1:0', resolve(ROOT, 'dist/main.js')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', BULKHEAD_CONFIG: configFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const started: Started = { child, output: '', exited: new Promise((done) => child.once('exit', () => done())) };
  // Only the tail: the service logs start-up and shutdown, not each request.
  const keep = (chunk: Buffer) => (started.output = (started.output + chunk.toString()).slice(-20_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  services.push(started);
  return started;
}

async function stopService(service: Started): Promise<void> {
  if (service.child.exitCode !== null || service.child.signalCode !== null) return;
  service.child.kill('SIGTERM');
  const gone = await Promise.race([service.exited.then(() => true), wait(5_000).then(() => false)]);
  if (!gone) {
    service.child.kill('SIGKILL');
    await service.exited;
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
    await Promise.all(services.map(stopService));
  })();
  return cleaning;
}

async function waitForOutput(service: Started, pattern: RegExp, what: string): Promise<RegExpExecArray> {
  const deadline = performance.now() + 20_000;
  for (;;) {
    const match = pattern.exec(service.output);
    if (match) return match;
    if (service.child.exitCode !== null) throw new Error(`the service ended before ${what}:\n${service.output}`);
    if (performance.now() > deadline) throw new Error(`the service did not ${what} within 20 s:\n${service.output}`);
    await wait(25);
  }
}

/** A minimal Chrome DevTools Protocol client over the service's inspector WebSocket. */
class Inspector {
  private nextId = 1;
  private readonly pending = new Map<number, { done: (result: unknown) => void; fail: (error: Error) => void }>();

  private constructor(private readonly socket: WebSocket) {
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
      const waiter = message.id === undefined ? undefined : this.pending.get(message.id);
      if (!waiter) return;
      this.pending.delete(message.id!);
      if (message.error) waiter.fail(new Error(message.error.message));
      else waiter.done(message.result);
    });
    socket.addEventListener('close', () => {
      for (const waiter of this.pending.values()) waiter.fail(new Error('the inspector closed'));
      this.pending.clear();
    });
  }

  static connect(url: string): Promise<Inspector> {
    return new Promise((done, fail) => {
      const socket = new WebSocket(url);
      socket.addEventListener('open', () => done(new Inspector(socket)), { once: true });
      socket.addEventListener('error', () => fail(new Error(`cannot reach the inspector at ${url}`)), { once: true });
    });
  }

  call<T>(method: string): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((done, fail) => {
      this.pending.set(id, { done: done as (result: unknown) => void, fail });
      this.socket.send(JSON.stringify({ id, method }));
    });
  }

  close(): void {
    this.socket.close();
  }
}

/** Resident set size and its peak, in MB, from /proc/<pid>/status. */
function rssOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rssMb: (kb('VmRSS') * 1024) / MB, peakMb: (kb('VmHWM') * 1024) / MB };
}

interface Answer {
  status: number;
  text: string;
}

function post(url: string, headers: Record<string, string>, body: string): Promise<Answer> {
  return new Promise((done, fail) => {
    const request = httpRequest(url, { method: 'POST', headers, agent: false, timeout: 5_000 }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => done({ status: response.statusCode ?? 0, text }));
    });
    request.on('timeout', () => request.destroy(new Error(`POST ${url} timed out`)));
    request.on('error', fail);
    request.end(body);
  });
}

const kindOf = (answer: Answer) => {
  try {
    return (JSON.parse(answer.text) as { error?: { kind?: string } }).error?.kind ?? '';
  } catch {
    return '';
  }
};

interface AutocannonInstance {
  on(event: 'response', listener: (client: unknown, status: number) => void): void;
  stop(): void;
}
type Autocannon = (
  options: Record<string, unknown>,
  done: (error: Error | null, result: { errors: number; timeouts: number }) => void,
) => AutocannonInstance;
// autocannon ships no types; this is the part of its programmatic API used here.
const autocannon = createRequire(__filename)('autocannon') as Autocannon;

/** Fires up to `amount` calls, for at most `capMs`; counts the answers by status. */
function fire(url: string, headers: Record<string, string>, body: string, amount: number, capMs: number) {
  return new Promise<{ statuses: Map<number, number>; errors: number; seconds: number }>((done, fail) => {
    const statuses = new Map<number, number>();
    const started = performance.now();
    // autocannon notices it is done on its next 1 s tick: time the calls by their last answer.
    let lastAnswer = started;
    const instance = autocannon(
      { url, method: 'POST', headers, body, amount, connections: CONNECTIONS, timeout: 10 },
      (error, result) => {
        clearTimeout(cap);
        cleanups.splice(cleanups.indexOf(stop), 1);
        if (error) fail(error);
        else done({ statuses, errors: result.errors + result.timeouts, seconds: (lastAnswer - started) / 1_000 });
      },
    );
    const stop = () => instance.stop();
    const cap = setTimeout(stop, capMs);
    cleanups.push(stop);
    instance.on('response', (_client, status) => {
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      lastAnswer = performance.now();
    });
  });
}

/** Builds the service if dist/ has none; before the time budget starts. */
function ensureBuilt(): void {
  if (existsSync(resolve(ROOT, 'dist/main.js'))) return;
  process.stdout.write('dist/main.js is missing: npm run build\n');
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed');
}

async function rssAcrossRejections(calls: number, leakCheckCalls: number) {
  const key = `bench-${randomBytes(16).toString('hex')}`;
  const dir = mkdtempSync(resolve(tmpdir(), 'bulkhead-bench-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const configFile = resolve(dir, 'memory.yaml');
  writeFileSync(
    configFile,
    [
      'server: { port: 0, host: 127.0.0.1, shutdownDrainMs: 1000 }',
      'auth:',
      '  allowAnonymous: false',
      '  apiKeys:',
      `    - { sha256: "${createHash('sha256').update(key).digest('hex')}", tenant: bench }`,
      'lanes:',
      '  held: { concurrency: 1, queueCapacity: 0 }',
      'tools:',
      '  hold: { lane: held, kind: builtin, builtin: delay, timeoutMs: 600000 }',
      '',
    ].join('\n'),
  );

  const service = startService(configFile);
  const pid = service.child.pid!;
  const port = Number((await waitForOutput(service, /listening on http:\/\/127\.0\.0\.1:(\d+)/, 'listen'))[1]);
  const url = `http://127.0.0.1:${port}/v1/tools/hold/invoke`;
  const inspectorUrl = (await waitForOutput(service, /Debugger listening on (ws:\/\/\S+)/, 'open its inspector'))[1]!;
  const inspector = await Inspector.connect(inspectorUrl);
  cleanups.push(() => inspector.close());
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

  // The call that holds the lane for the whole run; closing its connection aborts it.
  let holding: ClientRequest | undefined;
  holding = httpRequest(url, { method: 'POST', headers, agent: false });
  holding.on('error', () => undefined);
  holding.end(JSON.stringify({ arguments: { ms: 600_000 } }));
  cleanups.push(() => void holding?.destroy());

  const body = JSON.stringify({ arguments: { ms: 1 } });
  const probe = async () => {
    const answer = await post(url, headers, body);
    return `${answer.status} ${kindOf(answer)}`;
  };
  const deadline = performance.now() + 5_000;
  while ((await probe()) !== '503 queue_full') {
    if (performance.now() > deadline) throw new Error(`the held lane does not refuse: ${await probe()}`);
    await wait(20);
  }

  const fullGc = async () => {
    await inspector.call('HeapProfiler.collectGarbage');
    const { usedSize } = await inspector.call<{ usedSize: number }>('Runtime.getHeapUsage');
    return { rssMb: rssOf(pid).rssMb, heapMb: usedSize / MB };
  };
  const statuses = new Map<number, number>();
  let answered = 0;
  let errors = 0;
  let seconds = 0;
  /** Fires up to `amount` calls within `capMs` and adds them up; returns how many were made. */
  const fireCounted = async (amount: number, capMs: number) => {
    const fired = await fire(url, headers, body, amount, capMs);
    const made = [...fired.statuses.values()].reduce((sum, count) => sum + count, 0) + fired.errors;
    for (const [status, count] of fired.statuses) statuses.set(status, (statuses.get(status) ?? 0) + count);
    answered += made - fired.errors;
    errors += fired.errors;
    seconds += fired.seconds;
    return { made, callsPerS: made / fired.seconds };
  };

  // The issue's figure: the service as it is after start-up and 1 s of quiet, then after each
  // chunk; nothing but the calls themselves makes it collect garbage meanwhile.
  await wait(1_000);
  const readings = [{ calls: 0, ...rssOf(pid), callsPerS: Number.NaN }];
  const firingDeadline = performance.now() + FIRING_BUDGET_MS;
  for (let chunk = 1; chunk <= CHUNKS; chunk++) {
    const amount = Math.round((calls * chunk) / CHUNKS) - answered - errors;
    const capMs = Math.max(1_000, (firingDeadline - performance.now()) / (CHUNKS - chunk + 1));
    const { callsPerS } = await fireCounted(amount, capMs);
    await wait(chunk === CHUNKS ? 2_000 : 500);
    const reading = { calls: answered + errors, ...rssOf(pid), callsPerS };
    readings.push(reading);
    process.stdout.write(
      `  ${reading.calls} rejected calls: RSS ${reading.rssMb.toFixed(1)} MB (${callsPerS.toFixed(0)} calls/s)\n`,
    );
  }
  const made = answered + errors;

  // The leak check, on the warmed-up service: full GC, more rejected calls, full GC.
  const gcBefore = await fullGc();
  const check = await fireCounted(leakCheckCalls, LEAK_CHECK_BUDGET_MS);
  await wait(500);
  const gcAfter = await fullGc();
  process.stdout.write(
    `  leak check: ${check.made} more rejected calls between two full GCs (${check.callsPerS.toFixed(0)} calls/s)\n`,
  );
  const after = await probe();
  holding.destroy();
  holding = undefined;

  const refused = statuses.get(503) ?? 0;
  const growthMb = readings.at(-1)!.rssMb - readings[0]!.rssMb;
  return {
    callsAsked: calls,
    calls: made,
    refused,
    statuses: Object.fromEntries(statuses),
    errors,
    callsPerS: (answered + errors) / seconds,
    stillQueueFullAfter: after === '503 queue_full',
    readings,
    growthMb,
    leakCheck: {
      calls: check.made,
      before: gcBefore,
      after: gcAfter,
      rssGrowthMb: gcAfter.rssMb - gcBefore.rssMb,
      heapRetainedBytesPerCall: ((gcAfter.heapMb - gcBefore.heapMb) * MB) / check.made,
    },
    target: { growthMbBelow: TARGET_RSS_GROWTH_MB, met: growthMb < TARGET_RSS_GROWTH_MB },
  };
}

// ---------------------------------------------------------------------------------------------
// The run.

async function main(): Promise<void> {
  const calls = option('calls', QUICK ? 20_000 : 200_000, CHUNKS);
  const leakCheckCalls = QUICK ? 5_000 : 25_000;
  process.stdout.write(`memory: ${QUEUED.toLocaleString('en')} queued calls; node ${process.version}\n`);
  const partStarted = performance.now();
  const queued = await heapPerQueuedCall();
  const partSeconds = (performance.now() - partStarted) / 1_000;
  printTable(
    `heap per queued call: ${QUEUED.toLocaleString('en')} waiting behind one running call, after a forced GC (${partSeconds.toFixed(1)} s)`,
    queued.map((row) => ({
      'what waits': row.name,
      'bytes/call': row.bytesPerCall,
      '× pending promise': row.vsPendingPromise,
      'drain ms': row.name.includes('promise') ? '' : row.drainMs,
    })),
  );

  process.stdout.write(`\nservice RSS across ${calls.toLocaleString('en')} rejected HTTP calls\n`);
  const http = await rssAcrossRejections(calls, leakCheckCalls);
  printTable(
    `service RSS (MB) after each chunk of rejected calls, no GC forced`,
    http.readings.map((reading) => ({
      'rejected calls': reading.calls,
      RSS: reading.rssMb,
      growth: reading.rssMb - http.readings[0]!.rssMb,
      'peak RSS': reading.peakMb,
      'calls/s': Number.isNaN(reading.callsPerS) ? '' : reading.callsPerS,
    })),
  );
  const leak = http.leakCheck;
  const allRefused = http.refused === http.calls + leak.calls && http.errors === 0 && http.stillQueueFullAfter;
  process.stdout.write(
    `RSS growth ${http.growthMb.toFixed(1)} MB across ${http.calls.toLocaleString('en')} rejected calls ` +
      `(target < ${TARGET_RSS_GROWTH_MB} MB): ${http.target.met ? 'met' : 'NOT met'}; ` +
      `after the first chunk ${(http.readings.at(-1)!.rssMb - http.readings[1]!.rssMb).toFixed(1)} MB\n` +
      `leak check, ${leak.calls.toLocaleString('en')} more calls between two full GCs: heap used ` +
      `${leak.before.heapMb.toFixed(1)} -> ${leak.after.heapMb.toFixed(1)} MB ` +
      `(${leak.heapRetainedBytesPerCall.toFixed(1)} bytes per rejected call), RSS ` +
      `${leak.before.rssMb.toFixed(1)} -> ${leak.after.rssMb.toFixed(1)} MB\n` +
      `every call answered 503 queue_full: ${allRefused ? 'yes' : `NO (${JSON.stringify(http.statuses)})`}\n`,
  );
  if (http.calls < http.callsAsked) {
    process.stdout.write(
      `only ${http.calls} of ${http.callsAsked} calls within the ${FIRING_BUDGET_MS / 1000} s firing budget (a busy machine?)\n`,
    );
  }
  if (!allRefused) process.exitCode = 1;

  const file = writeResults('memory', { queued: { calls: QUEUED, rows: queued }, http });
  process.stdout.write(`wrote ${file}\n`);
}

function respawnWithGc(): void {
  const child = spawn(process.execPath, ['--expose-gc', ...process.execArgv, ...process.argv.slice(1)], {
    stdio: ['pipe', 'inherit', 'inherit'],
    env: { ...process.env, [RESPAWNED]: '1' },
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 130 : 1)));
}

if (typeof (globalThis as { gc?: unknown }).gc !== 'function') {
  if (process.env[RESPAWNED]) throw new Error('--expose-gc did not expose gc()');
  respawnWithGc();
} else {
  let stopping = false;
  const stop = (why: string, code: number) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`memory bench: ${why}; stopping\n`);
    void cleanUp().then(() => process.exit(code));
  };
  ensureBuilt();
  const deadline = setTimeout(() => stop(`over its ${BUDGET_MS / 1000} s budget`, 1), BUDGET_MS);
  deadline.unref();
  // `on`, not `once`: a terminal's Ctrl-C reaches this process twice when a parent forwards it.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stop(signal, 130));
  // Started again by a parent: when the parent goes, for whatever reason, so do we.
  if (process.env[RESPAWNED]) process.stdin.once('end', () => stop('the parent is gone', 1)).resume();
  // Last resort if the event loop is already going away: no service outlives us.
  process.on('exit', () => {
    for (const { child } of services) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  main()
    .catch((error: unknown) => {
      process.stderr.write(`memory bench failed: ${(error as Error).stack ?? String(error)}\n`);
      process.exitCode = 1;
    })
    .finally(() =>
      cleanUp().then(() => {
        clearTimeout(deadline);
        // The parent's stdin pipe would keep this process alive.
        if (process.env[RESPAWNED]) process.stdin.destroy();
      }),
    );
}
