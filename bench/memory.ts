/**
 * Memory benchmark (issue 6 item 5): what a waiting call costs in heap, and whether refusing
 * calls over HTTP makes the service grow.
 *
 *   npm run bench -- memory [--calls N] [--quick]
 *
 * Options:
 *   --calls N   rejected HTTP calls in part 2 (default 200,000, in 4 equal chunks)
 *   --quick     20,000 queued calls in part 1, 20,000 HTTP calls in part 2 (nothing written)
 *
 * Part 1, heap per queued call: 100,000 calls waiting in a lane, and in the limiters people
 * would otherwise use, measured in a process of its own started with --expose-gc
 * (bench/memory/heap-per-call.ts says how).
 *
 * Part 2, RSS growth across rejected HTTP calls: the built service (`node dist/main.js`) with
 * one API key, a lane `held` of concurrency 1 and queue 0, a builtin `delay` tool `hold` in
 * it. One call `{ ms: 600000 }` holds the lane for the whole run; then autocannon (32
 * keep-alive connections, in this process) fires the rejected calls, every one of which must
 * answer 503 `queue_full`. The service's RSS is read from /proc/<pid>/status (VmRSS; VmHWM is
 * the peak) before the first call after 1 s of quiet, after each chunk after 0.5 s, and at the
 * end after 2 s; nothing but the calls makes it collect garbage meanwhile. The rejected calls
 * get at most 30 s in all (a busy machine fires fewer, and says so). Figures:
 *   - RSS growth in MB from the first reading to the last: the issue's figure (target < 10 MB),
 *     per chunk too, so a one-off warm-up (JIT, pools) can be told from a steady climb. It also
 *     follows V8's heap sizing, which lets garbage pile up before collecting it: from one run
 *     to the next it moves by MBs with no leak at all. Hence:
 *   - the leak check, on the service warmed up by then: a full GC, 25,000 more rejected calls
 *     (5,000 with --quick; at most 5 s), a full GC. Both GCs are forced over the service's
 *     inspector (started on a free loopback port; the service itself exposes nothing new),
 *     which also reports heap used. Heap used after, minus before, per call is what each
 *     refusal leaves behind, whatever the GC's timing; RSS before and after is given too.
 *
 * Prints tables and writes bench/results/memory.json. Bounded: 60 s, and every process it
 * started is stopped on success, error, SIGINT and SIGTERM.
 */
import { readFileSync } from 'node:fs';
import { type ClientRequest, request as httpRequest } from 'node:http';
import { resolve } from 'node:path';
import { setTimeout as wait } from 'node:timers/promises';
import type { QueuedRow } from './memory/heap-per-call';
import { Inspector } from './memory/inspector';
import { runLoad } from './support/load';
import { option } from './support/options';
import { onCleanup, runForResult, runMain, waitForLine } from './support/processes';
import { printTable, writeResults } from './support/report';
import { apiKey, type Answer, type Service, startService } from './support/service';

const QUICK = process.argv.includes('--quick');
/** Waiting calls in part 1 (fewer with --quick, where array FIFOs still drain in quadratic time). */
const QUEUED = QUICK ? 20_000 : 100_000;
const CHUNKS = 4;
const CONNECTIONS = 32;
const BUDGET_MS = 60_000;
const TARGET_RSS_GROWTH_MB = 10;
/** The most all the chunks of rejected calls may take together. */
const FIRING_BUDGET_MS = 30_000;
/** The most the leak check's calls may take. */
const LEAK_CHECK_BUDGET_MS = 5_000;
const MB = 1024 * 1024;

/** Resident set size and its peak, in MB, from /proc/<pid>/status. */
function rssOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rssMb: (kb('VmRSS') * 1024) / MB, peakMb: (kb('VmHWM') * 1024) / MB };
}

const kindOf = (answer: Answer) => {
  try {
    return (JSON.parse(answer.text) as { error?: { kind?: string } }).error?.kind ?? '';
  } catch {
    return '';
  }
};

/** The built service with one lane held full, and its inspector (for full GCs and heap readings). */
async function startHeldService() {
  const key = apiKey('bench');
  const service: Service = await startService(
    {
      auth: { allowAnonymous: false, apiKeys: [key.entry] },
      lanes: { held: { concurrency: 1, queueCapacity: 0 } },
      tools: { hold: { lane: 'held', kind: 'builtin', builtin: 'delay', timeoutMs: 600_000 } },
    },
    { name: 'service', nodeArgs: ['--inspect=127.0.0.1:0'] },
  );
  const inspectorUrl = (await waitForLine(service.child, /Debugger listening on (ws:\/\/\S+)/, 5_000))[1]!;
  const inspector = await Inspector.connect(inspectorUrl);
  onCleanup(() => inspector.close());
  const url = service.url('/v1/tools/hold/invoke');

  // The call that holds the lane for the whole run; closing its connection aborts it.
  const holding: ClientRequest = httpRequest(url, { method: 'POST', headers: key.headers, agent: false });
  holding.on('error', () => undefined);
  holding.end(JSON.stringify({ arguments: { ms: 600_000 } }));
  onCleanup(() => void holding.destroy());

  const body = JSON.stringify({ arguments: { ms: 1 } });
  const probe = async () => {
    const answer = await service.call('/v1/tools/hold/invoke', { method: 'POST', headers: key.headers, body });
    return `${answer.status} ${kindOf(answer)}`;
  };
  const deadline = performance.now() + 5_000;
  while ((await probe()) !== '503 queue_full') {
    if (performance.now() > deadline) throw new Error(`the held lane does not refuse: ${await probe()}`);
    await wait(20);
  }
  return { service, pid: service.child.process.pid!, url, headers: key.headers, body, inspector, probe, holding };
}

async function rssAcrossRejections(calls: number, leakCheckCalls: number) {
  const { pid, url, headers, body, inspector, probe, holding } = await startHeldService();
  const fullGc = async () => {
    await inspector.call('HeapProfiler.collectGarbage');
    const { usedSize } = await inspector.call<{ usedSize: number }>('Runtime.getHeapUsage');
    return { rssMb: rssOf(pid).rssMb, heapMb: usedSize / MB };
  };
  const statuses = new Map<number, number>();
  let made = 0;
  let errors = 0;
  let seconds = 0;
  /** Fires up to `amount` calls within `capMs` and adds them up. */
  const fire = async (amount: number, capMs: number) => {
    const fired = await runLoad({ url, headers, body, connections: CONNECTIONS, amount, durationS: capMs / 1_000 });
    const count = Object.values(fired.statuses).reduce((sum, n) => sum + n, 0) + fired.errors;
    for (const [status, n] of Object.entries(fired.statuses)) {
      statuses.set(Number(status), (statuses.get(Number(status)) ?? 0) + n);
    }
    made += count;
    errors += fired.errors;
    seconds += fired.durationS;
    return { made: count, callsPerS: count / fired.durationS };
  };

  // The issue's figure: the service as it is after start-up and 1 s of quiet, then after each
  // chunk; nothing but the calls themselves makes it collect garbage meanwhile.
  await wait(QUICK ? 300 : 1_000);
  const readings = [{ calls: 0, ...rssOf(pid), callsPerS: Number.NaN }];
  const firingDeadline = performance.now() + FIRING_BUDGET_MS;
  for (let chunk = 1; chunk <= CHUNKS; chunk++) {
    const amount = Math.round((calls * chunk) / CHUNKS) - made;
    const capMs = Math.max(1_000, (firingDeadline - performance.now()) / (CHUNKS - chunk + 1));
    const { callsPerS } = await fire(amount, capMs);
    await wait(QUICK ? 200 : chunk === CHUNKS ? 2_000 : 500);
    const reading = { calls: made, ...rssOf(pid), callsPerS };
    readings.push(reading);
    process.stdout.write(
      `  ${reading.calls} rejected calls: RSS ${reading.rssMb.toFixed(1)} MB (${callsPerS.toFixed(0)} calls/s)\n`,
    );
  }
  const chunkCalls = made;

  // The leak check, on the warmed-up service: full GC, more rejected calls, full GC.
  const gcBefore = await fullGc();
  const check = await fire(leakCheckCalls, LEAK_CHECK_BUDGET_MS);
  await wait(QUICK ? 200 : 500);
  const gcAfter = await fullGc();
  process.stdout.write(
    `  leak check: ${check.made} more rejected calls between two full GCs (${check.callsPerS.toFixed(0)} calls/s)\n`,
  );
  const after = await probe();
  holding.destroy();

  const growthMb = readings.at(-1)!.rssMb - readings[0]!.rssMb;
  return {
    callsAsked: calls,
    calls: chunkCalls,
    refused: statuses.get(503) ?? 0,
    statuses: Object.fromEntries(statuses),
    errors,
    callsPerS: made / seconds,
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

async function main(): Promise<void> {
  const calls = option('calls', QUICK ? 20_000 : 200_000, CHUNKS);
  const leakCheckCalls = QUICK ? 5_000 : 25_000;
  process.stdout.write(`memory: ${QUEUED.toLocaleString('en')} queued calls; node ${process.version}\n`);
  const partStarted = performance.now();
  const queued = await runForResult<QueuedRow[]>(
    'heap per queued call',
    resolve(__dirname, 'memory/heap-per-call.ts'),
    ['--queued', String(QUEUED)],
    ['--expose-gc'],
  );
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

  if (QUICK) process.stdout.write('quick mode: results not written\n');
  else process.stdout.write(`wrote ${writeResults('memory', { queued: { calls: QUEUED, rows: queued }, http })}\n`);
}

runMain('memory', main, { budgetMs: BUDGET_MS });
