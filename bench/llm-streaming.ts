/**
 * LLM streaming benchmark: what does the LLM route (`POST /v1/chat/completions`, `stream: true`)
 * add to a streamed answer's time to its first token, and what does it cost its throughput,
 * against reading the model server's stream directly, and against the least a proxy in Node does
 * to pass the same stream through (the floor: a proxy on the same cores can never reach direct)?
 *
 *   npm run bench -- llm-streaming [options]
 *
 * Options:
 *   --rounds N       rounds, each running every scenario's sides once in turn (default 3, at
 *                    least 2)
 *   --streams N      streams of each run at 16 at a time (default 320, at least 16); a run at
 *                    1 at a time has 100
 *   --quick          1 round of 32 and 4 streams, no warm-up: does it still run? (no results
 *                    written)
 *   --profile        also a CPU profile of the service (a process of its own under V8's
 *                    sampler) streaming immediate answers 16 at a time, after the rounds
 *
 * Processes, all on loopback: the model server (bench/llm-streaming/sse-upstream.ts: OpenAI's
 * Chat Completions streamed as server-sent events, `data: <chunk>\n\n`; each answer the role
 * chunk, 200 content chunks, the finish chunk, the usage chunk and `data: [DONE]`, written with no
 * wait between them), the service (`node dist/main.js`: one API-key tenant in the normal pool,
 * two routes with one `openai` target each at the server, cache off, in a lane and a pool too big
 * to limit), the floor proxy (bench/llm-streaming/floor-proxy.ts: `node:http` and one undici
 * Pool, nothing else), and this one, the clients (undici, reading each body as it arrives).
 *
 * Scenarios, each a variant at a concurrency (1, then 16 streams at a time):
 *   immediate  the server sends the chunks as soon as the request is read (throughput: what
 *              passing 200 chunks through costs);
 *   delayed    the server sends its headers at once and the first chunk 20 ms later (a model's
 *              time to its first token: what the route adds to it).
 * Sides, the same streamed request (`stream_options.include_usage`, a question of its own each):
 *   direct   the server's `/v1/chat/completions` itself (the baseline);
 *   floor    the same request through the floor proxy: the body read and sent on unchanged at
 *            the same path on a keep-alive connection, the server's status, content type and SSE
 *            body written back as each read of it arrives (undici's `stream` into the response),
 *            nothing parsed;
 *   service  the route (`stream` or `stream-delayed`): auth, containment, the lane, the breaker,
 *            the provider's request, the upstream's SSE parsed a read at a time, each chunk
 *            checked and added up, each read's events written to the client in one write as the
 *            upstream sent them, the usage chunk with the cost.
 * Each round runs every scenario's direct, floor then service run, in that order.
 *
 * Figures: time to the first content chunk (TTFT) and to the end of each whole stream, p50 and
 * p99; whole streams per second and their content chunks per second; the CPU the service, the
 * floor, the server and the clients spent per stream. Per round, summarised as median (min-max):
 * floor - direct and service - direct TTFT, floor / direct and service / direct streams per
 * second; service - floor TTFT and service / floor streams per second, and issue 39's targets
 * against the floor (llm-streaming/targets.ts: service / floor >= 0.8 at 16 immediate streams at a
 * time, service - floor TTFT p50 <= 0.2 ms delayed; a target missed is no failed check). Prints
 * tables and writes bench/results/llm-streaming.json. Exits 1 if a check fails, on any side: a
 * stream that was not 200 `text/event-stream` with every content chunk in order, the finish and
 * usage chunks and `data: [DONE]` last; a stream that did not reach the server exactly once, one
 * cut there, a request the server refused; the service's attempts not one `ok` per stream of each
 * route; a call left in its lane; or a process still running at the end. About 45 s on a quiet
 * machine (78 s at load average 6 on two cores); bounded at 150 s (more with more rounds or
 * streams). `--quick` takes about 8 s (18 s at load average 10).
 */
import { loadavg } from 'node:os';
import { stopAll } from './llm-proxy/checks';
import { checkAttempts, checkRun } from './llm-streaming/checks';
import { startStreamFloorProxy } from './llm-streaming/floor-proxy';
import { endpoint, LANE, type Scenario, serviceConfig, type Side, SIDES, userOf } from './llm-streaming/setup';
import { startSseUpstream } from './llm-streaming/sse-upstream';
import { runStreams } from './llm-streaming/stream-client';
import { printSummaries, runFigures, type StreamRun, summariseScenario, writeRunLine } from './llm-streaming/summary';
import { checkTargets, printTargets } from './llm-streaming/targets';
import { cpuSecondsOf, ownCpuSeconds } from './support/cpu';
import { countsSince, metricBy } from './support/metric-sum';
import { option } from './support/options';
import { runMain } from './support/processes';
import { writeResultsUnlessQuick } from './support/report';
import { apiKey, type Service, startService } from './support/service';
import { untilQuiet } from './support/until-quiet';
import { printProfile, profileStreams } from './llm-streaming/profile';

// With --profile, a service of its own and 1,280 more streams: about 10 s more (30 s loaded).
const BUDGET_MS = process.argv.includes('--profile') ? 180_000 : 150_000;
const CONCURRENCY = [1, 16] as const;
const TOP_FRAMES = 15;

type Settings = ReturnType<typeof settings>;

function settings() {
  const quick = process.argv.includes('--quick');
  const streams = quick ? 32 : option('streams', 320, 16);
  return {
    quick,
    rounds: quick ? 1 : option('rounds', 3, 2),
    /** Streams of a run at each concurrency. */
    streams: { 1: quick ? 4 : 100, 16: streams } as Record<number, number>,
    warmUpStreams: quick ? 0 : 64,
    profile: process.argv.includes('--profile'),
    // Far above what a run takes (320 streams through the service: about 2 s).
    maxDurationMs: 20_000,
  };
}

async function main(s: Settings): Promise<void> {
  const loadAverageAtStart = loadavg();
  const key = apiKey('agent');
  const upstream = await startSseUpstream();
  const [service, floor] = await Promise.all([
    startService(serviceConfig(upstream, key, Math.max(...CONCURRENCY))),
    startStreamFloorProxy(new URL(upstream.baseUrl).origin),
  ]);
  const bases = { service: service.base, floor: floor.base };
  const scenarios: Scenario[] = (['immediate', 'delayed'] as const).flatMap((variant) =>
    CONCURRENCY.map((concurrency) => ({ variant, concurrency })),
  );
  process.stdout.write(
    `llm-streaming: ${s.rounds} rounds of ${scenarios.map((c) => `${c.variant} x${c.concurrency}`).join(', ')}; ` +
      `${SIDES.join(' then ')}; ${s.streams[1]} streams at 1 at a time, ${s.streams[16]} at 16\n` +
      `node ${process.version}, load average ${loadAverageAtStart.map((load) => load.toFixed(2)).join(' ')}\n`,
  );

  const run = (scenario: Scenario, side: Side, streams: number, concurrency: number) =>
    runStreams({
      ...endpoint(side, scenario.variant, upstream, bases, key),
      streams,
      concurrency,
      maxDurationMs: s.maxDurationMs,
    });
  // Every way once, checked: a side that cannot stream fails here, before anything is measured.
  for (const scenario of scenarios.filter((c) => c.concurrency === 1)) {
    for (const side of SIDES) {
      const probe = await run(scenario, side, 1, 1);
      if (probe.ok !== 1) throw new Error(`${side}'s ${scenario.variant} stream was wrong: ${probe.firstFailure}`);
      if (s.warmUpStreams > 0) await run(scenario, side, s.warmUpStreams, 16);
    }
  }
  await untilQuiet(() => upstream.stats());

  const cpu = () => ({
    service: cpuSecondsOf(service.child.process.pid),
    floor: cpuSecondsOf(floor.child.process.pid),
    upstream: cpuSecondsOf(upstream.child.process.pid),
    client: ownCpuSeconds(),
  });
  const measure = async (scenario: Scenario, side: Side, round: number): Promise<StreamRun> => {
    const streams = s.streams[scenario.concurrency]!;
    const before = await upstream.stats();
    const cpuBefore = cpu();
    const result = await run(scenario, side, streams, scenario.concurrency);
    const cpuAfter = cpu();
    const after = await untilQuiet(() => upstream.stats(), 100);
    const perStream = (name: keyof typeof cpuBefore) => ((cpuAfter[name] - cpuBefore[name]) * 1e6) / result.ok;
    const measured: StreamRun = {
      ...scenario,
      side,
      round,
      sent: result.sent,
      ok: result.ok,
      failed: result.failed,
      firstFailure: result.firstFailure,
      ...runFigures(result),
      cpuUsPerStream: {
        service: perStream('service'),
        floor: perStream('floor'),
        upstream: perStream('upstream'),
        client: perStream('client'),
      },
      upstream: {
        streams: (after.byUser[userOf(side)] ?? 0) - (before.byUser[userOf(side)] ?? 0),
        cancelled: after.cancelled - before.cancelled,
        rejected: after.rejected - before.rejected,
        connections: after.connections - before.connections,
      },
    };
    writeRunLine(measured);
    return measured;
  };

  const attemptsBefore = await attemptsByRoute(service);
  const runs: StreamRun[] = [];
  for (let round = 1; round <= s.rounds; round++) {
    for (const scenario of scenarios) for (const side of SIDES) runs.push(await measure(scenario, side, round));
  }
  const attemptsAfter = await attemptsByRoute(service);
  const attempts = Object.fromEntries(
    Object.keys(attemptsAfter).map((route) => [route, countsSince(attemptsBefore[route] ?? {}, attemptsAfter[route]!)]),
  );

  const problems = runs.flatMap((r) => checkRun(r, s.streams[r.concurrency]!));
  problems.push(...checkAttempts(runs, attempts));
  const lane = (await service.lanes(key.headers))[LANE];
  if (!lane || lane.active !== 0 || lane.waiting !== 0) {
    problems.push(`the lane still holds calls once every stream ended: ${JSON.stringify(lane)}`);
  }
  const profiles = s.profile
    ? await profileStreams(
        upstream,
        key,
        { concurrency: 16, warmUpStreams: s.quick ? 16 : 320, streams: s.quick ? 32 : 960 },
        () => untilQuiet(() => upstream.stats()),
      )
    : [];
  problems.push(...(await stopAll([service.child, floor.child, upstream.child])));

  const summaries = scenarios.map((scenario) => summariseScenario(scenario, runs));
  const targets = checkTargets(summaries);
  printSummaries(summaries);
  printTargets(targets);
  for (const profile of profiles) printProfile(profile, TOP_FRAMES);
  process.stdout.write(`\nchecks: ${problems.length === 0 ? 'all passed' : problems.join('; ')}\n`);

  writeResultsUnlessQuick('llm-streaming', s.quick, {
    settings: { ...s, concurrency: CONCURRENCY, loadAverageAtStart, loadAverageAtEnd: loadavg() },
    summary: summaries,
    targets,
    checks: { problems, attempts },
    profiles,
    runs,
  });
  if (problems.length > 0) process.exitCode = 1;
}

/** `bulkhead_llm_requests_total` so far, by route, then by outcome. */
async function attemptsByRoute(service: Service): Promise<Record<string, Record<string, number>>> {
  const metrics = await service.metrics();
  const routes = new Set(
    metrics.samples.filter((m) => m.name === 'bulkhead_llm_requests_total').map((m) => m.labels.route ?? ''),
  );
  return Object.fromEntries(
    [...routes].map((route) => [
      route,
      metricBy(
        { ...metrics, samples: metrics.samples.filter((m) => m.labels.route === route) },
        'bulkhead_llm_requests_total',
        'outcome',
      ),
    ]),
  );
}

runMain('llm-streaming', () => main(settings()), { budgetMs: BUDGET_MS });
