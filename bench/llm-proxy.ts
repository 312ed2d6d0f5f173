/**
 * LLM proxy benchmark: what does a chat completion cost through the service's LLM route
 * (`POST /v1/chat/completions`), against calling the model's server directly, and against
 * Portkey's AI gateway forwarding the same request?
 *
 *   npm run bench -- llm-proxy [options]
 *
 * Options:
 *   --pairs N        rounds, each running every side once in turn (default 4, at least 4)
 *   --duration S     seconds per measured run (default 2)
 *   --connections N  autocannon connections (default 32)
 *   --sequential N   requests per side in each sequential round (default 3,000; 0: none)
 *   --no-portkey     leave Portkey out even if it is installed
 *   --public-runs N  runs of the public method per side (default 3; 0: none; --quick: 1)
 *   --profile        also CPU profiles of the service (a process of its own under V8's
 *                    sampler, after the measured runs), 3 s of load on the route without cache,
 *                    then 3 s of cache hits: the top self-time frames, where the time goes by
 *                    package, and the service's own functions
 *   --quick          1 round of 0.5 s: does it still run? (no results written)
 *
 * Processes, all on loopback: the model's server (bench/llm-proxy/openai-upstream.ts: OpenAI's
 * Chat Completions wire format, non-streamed; it parses each request and answers a fixed
 * chat.completion with usage at once), the service (`node dist/main.js`: one API-key tenant,
 * routed to the normal pool; two LLM routes whose one target is `provider: openai` at the
 * server's base URL, in a lane and a pool too big to limit; egress to 127.0.0.0/8 only; no rate
 * limit or budget), Portkey's gateway if installed (bench/proxy/portkey.ts), and this one,
 * autocannon; for the sequential rounds a floor proxy too (below).
 *
 * Sides, each POSTing the same short chat request (a system and a user message):
 *   direct   the server's `/v1/chat/completions` itself (the baseline);
 *   service  the route `chat` (`cache: false`): auth, containment routing, the request parsed and
 *            checked, the lane, the breaker, the provider's request built, undici to the server,
 *            the answer parsed and checked, the cost computed, the answer with its headers;
 *   messages the route `chat` through Anthropic's Messages API (`POST /v1/messages`): the
 *            ingress's translation of the request and of the answer, on top of the service's path;
 *   responses the route `chat` through OpenAI's Responses API (`POST /v1/responses`), the same;
 *   cached   the route `chat-cached` (the same target, the exact cache on): after the warm-up,
 *            every request is a hit and never reaches the server;
 *   tool     an http tool of the same service forwarding the same request to the server
 *            (`POST /v1/tools/chat_tool/invoke`, the request as its arguments): the service's
 *            plain proxy path, to tell the LLM route's own cost from the service's;
 *   portkey  Portkey's `/v1/chat/completions` with `x-portkey-provider: openai` and
 *            `x-portkey-custom-host: <server>/v1`: its OpenAI provider, forwarding to the server;
 *   embed-direct the server's `/v1/embeddings` itself, one short text, floats back (the baseline
 *            of the next);
 *   embeddings the route `embed` (`POST /v1/embeddings`, `cache: false`) to the same server: the
 *            chat route's pipeline asking for a vector, its answer read and checked by the
 *            embeddings reader; its added latency is over embed-direct.
 * Each round runs direct, service, messages, responses, cached, tool, portkey, embed-direct,
 * embeddings once, in that order; a ratio "per
 * round" is X/Y within a round, summarised as median (min-max). The route `chat` has its cache
 * off because a hit would measure the cache, not the proxying: the cache's cost is the `cached`
 * side's, measured on its own. Each side names itself in the request's `user`, so the server
 * counts its requests apart from a previous side's stragglers.
 *
 * Then the sequential method of the independent gateway benchmarks (bench/llm-proxy/sequential.ts):
 * one request at a time on one keep-alive connection, 3 alternated rounds of `--sequential`
 * requests on direct, floor, service, messages, responses, tool, embed-direct and embeddings; the
 * added latency of a side is its p50 (p99) less direct's in the same round (embeddings: less
 * embed-direct's). `floor` is the least a proxy in Node adds
 * (bench/llm-proxy/floor-proxy.ts: node:http and an undici Pool, the JSON parsed and written both
 * ways, nothing else): what the service adds beyond it is its own and its framework's.
 *
 * Before any of that, the warm-up (bench/llm-proxy/warm-up.ts): a second service started fresh,
 * probed once, then 12 blocks of 250 requests one at a time to its chat route, each block's p50
 * less direct's in a block just before it; printed beside the warm figure of the sequential
 * rounds, with the number of requests after which every block stays within 1.2x of it.
 *
 * And the public gateway benchmark's method (bench/llm-proxy/public-method.ts: a fresh process
 * per run, the global `fetch`, 15 warm-up calls, 7 rounds of 25 beside direct, the median of the
 * rounds' added medians), runs of each side alternated: the service as `npm start` runs it, the
 * same without its warm-up (`server.warmUpMs: 0`), and Portkey when it runs here.
 *
 * Figures: p50, p99 (of the checked 2xx answers, each response's own time), checked 2xx/s, and
 * the CPU each process used per such answer (from /proc); the added latencies. Prints tables and writes
 * bench/results/llm-proxy.json. Exits 1 if a check fails: an answer that was not 200 with the
 * upstream's text and usage (every answer is checked, Portkey's too), a proxied answer that did
 * not reach the server once, a cache hit that did, a request the server refused, the service's
 * metrics not showing every call through the normal pool and the right route, or a process
 * still running at the end. About 2 min (more with --profile); bounded at about 3 min (more with
 * more rounds, longer runs or --profile). `--quick` takes about 30 s.
 */
import { loadavg } from 'node:os';
import { describePortkey, leavePortkeyOut, startPortkey } from './proxy/portkey';
import { check, checkMetrics, stopAll } from './llm-proxy/checks';
import { runCheckedLoad } from './llm-proxy/checked-load';
import { startFloorProxy } from './llm-proxy/floor-proxy';
import { type OpenAiUpstream, settle, startOpenAiUpstream } from './llm-proxy/openai-upstream';
import { printProfile, profileService } from './llm-proxy/profile';
import {
  addedLatencies,
  printAddedLatencies,
  SEQUENTIAL_SIDES,
  sequentialRun,
  type SequentialRun,
} from './llm-proxy/sequential';
import {
  directEmbeddingsEndpoint,
  directEndpoint,
  embeddingsEndpoint,
  type Endpoint,
  floorEndpoint,
  messagesEndpoint,
  portkeyEndpoint,
  probe,
  responsesEndpoint,
  serviceConfig,
  serviceEndpoint,
  toolEndpoint,
  userOf,
} from './llm-proxy/sides';
import { COMPARED, compare, type Run, type Side, SIDES } from './llm-proxy/summary';
import { printWarmUp, warmUpCurve, type WarmUpBlock } from './llm-proxy/warm-up';
import { type FreshGateway, printPublicMethod, publicMethodRuns } from './llm-proxy/public-method';
import { runMain, stopChild } from './support/processes';
import { fixed, writeResultsUnlessQuick } from './support/report';
import { cpuMeter, inRounds, summariseSides, withCpu } from './support/rounds';
import { printRatiosTable, printSidesTable, writeRunHeader, writeRunLine } from './support/rounds-report';
import { type ApiKey, apiKey, startService } from './support/service';
import { option, runOptions } from './support/options';

const BUDGET_MS = 130_000;
const PROFILE_S = 3;
const TOP_FRAMES = 15;
const SEQUENTIAL_ROUNDS = 3;
const QUICK_SEQUENTIAL = 200;
/** The warm-up curve: blocks of requests to a fresh service (quick: 2 of 50). */
const WARM_UP_BLOCKS = 12;
const WARM_UP_BLOCK_SIZE = 250;

type Settings = ReturnType<typeof settings>;

function settings() {
  return {
    ...runOptions({ connections: 32, durationS: 2 }),
    portkey: !process.argv.includes('--no-portkey'),
    sequential: process.argv.includes('--quick') ? QUICK_SEQUENTIAL : option('sequential', 3_000, 0),
    profile: process.argv.includes('--profile'),
    publicRuns: process.argv.includes('--quick') ? 1 : option('public-runs', 3, 0),
  };
}

// ---------------------------------------------------------------------------------------------

async function main(s: Settings): Promise<void> {
  const key = apiKey('agent');
  const upstream = await startOpenAiUpstream();
  const [service, portkey, floor] = await Promise.all([
    startService(serviceConfig(upstream, key, s.connections)),
    startPortkey(s.portkey),
    startFloorProxy(upstream.base),
  ]);

  const endpoints: Partial<Record<Side, Endpoint>> = {
    direct: directEndpoint(upstream),
    floor: floorEndpoint(floor.base, upstream),
    service: serviceEndpoint(service.base, key, false),
    messages: messagesEndpoint(service.base, key),
    responses: responsesEndpoint(service.base, key),
    cached: serviceEndpoint(service.base, key, true),
    tool: toolEndpoint(service.base, key),
    'embed-direct': directEmbeddingsEndpoint(upstream),
    embeddings: embeddingsEndpoint(service.base, key),
  };
  // The cached side's first request fills the cache; its second is a hit.
  const probes: Array<[Side, number]> = [
    ['direct', 1],
    ['floor', 1],
    ['service', 1],
    ['messages', 1],
    ['responses', 1],
    ['cached', 1],
    ['cached', 0],
    ['tool', 1],
    ['embed-direct', 1],
    ['embeddings', 1],
  ];
  for (const [side, reaches] of probes) {
    const wrong = await probe(side, endpoints[side]!, upstream, reaches);
    if (wrong) throw new Error(wrong);
  }

  const portkeyInfo = portkey.info;
  if (portkey.child && portkey.base) {
    const endpoint = portkeyEndpoint(portkey.base, upstream);
    const wrong = await probe('portkey', endpoint, upstream, 1);
    if (!wrong) endpoints.portkey = endpoint;
    else await leavePortkeyOut(portkeyInfo, portkey.child, wrong);
  }
  const sides = SIDES.filter((side) => endpoints[side]);

  // Before anything warms the service up: a fresh one's first requests, one at a time.
  const warmUp = await freshWarmUp(upstream, key, s);
  const problems = warmUp.some((block) => block.wrong > 0)
    ? ["warm-up: some answers were not 200 with the upstream's answer"]
    : [];
  // The public benchmark's method: fresh processes, `fetch`, Portkey beside when it runs here.
  const publicRuns = await publicMethodRuns(
    publicMethodSides(upstream, key, s, endpoints.portkey !== undefined),
    directEndpoint(upstream),
    s.publicRuns,
  );
  if (publicRuns.some((run) => run.wrong > 0)) problems.push('public method: some answers were wrong');

  writeRunHeader('llm-proxy', s, sides, describePortkey(portkeyInfo));

  const cpuNow = cpuMeter({ service, upstream, portkey });
  const load = (side: Side, durationS: number) =>
    runCheckedLoad({ ...endpoints[side]!, connections: s.connections, durationS });

  const measure = async (side: Side, round: number): Promise<Run> => {
    const before = await settle(upstream);
    const { result, cpuCores } = await withCpu(cpuNow, () => load(side, s.durationS));
    const after = await upstream.stats();
    const run: Run = {
      round,
      side,
      ...result,
      upstreamRequests: (after.byUser[userOf(side)] ?? 0) - (before.byUser[userOf(side)] ?? 0),
      upstreamRejected: after.rejected - before.rejected,
      cpuCores,
    };
    writeRunLine(side, run);
    return run;
  };

  // Warm-up, not measured: every path once (JIT, connection pools). A quick run only checks
  // that everything still runs, and the probes went every way once already.
  if (!s.quick) for (const side of sides) await load(side, 1);

  const runs = await inRounds(s.pairs, sides, measure);

  problems.push(...check(runs, s.connections));
  problems.push(...(await checkMetrics(service, runs, s.connections)));

  const sequential: SequentialRun[] = [];
  if (s.sequential > 0) {
    const rounds = s.quick ? 1 : SEQUENTIAL_ROUNDS;
    for (let round = 1; round <= rounds; round++) {
      for (const side of SEQUENTIAL_SIDES) {
        const run = await sequentialRun(side, endpoints[side]!, round, s.sequential);
        if (run.wrong > 0)
          problems.push(`${side}: ${run.wrong} sequential answers were not 200 with the upstream's answer`);
        sequential.push(run);
      }
    }
  }
  const added = addedLatencies(sequential, SEQUENTIAL_SIDES);

  const profiles = s.profile
    ? await profileService(
        upstream,
        key,
        {
          connections: s.connections,
          warmUpS: s.quick ? 0.5 : 1,
          durationS: s.quick ? 1 : PROFILE_S,
        },
        () => settle(upstream),
      )
    : [];

  // Everything started here ends here, and is seen to end.
  problems.push(
    ...(await stopAll([service.child, upstream.child, floor.child, ...(portkey.child ? [portkey.child] : [])])),
  );

  const { summaries, comparisons } = summariseSides(runs, (run) => run.side, sides, COMPARED, compare);

  printSidesTable('per side, median (min-max) over the rounds', 'side', sides, summaries);
  printRatiosTable(
    'ratios: per round, median (min-max); then of the medians (server CPU per call: the proxy over the other server)',
    comparisons,
    { column: 'server CPU/call', ofMedians: (c) => fixed(c.serverCpu, 3) },
  );
  if (added.length > 0) printAddedLatencies(added, s.sequential, s.quick ? 1 : SEQUENTIAL_ROUNDS);
  const warmAdded = added.find((side) => side.side === 'service')?.p50.median;
  if (warmAdded !== undefined) printWarmUp(warmUp, warmAdded);
  if (publicRuns.length > 0) printPublicMethod(publicRuns);
  for (const profile of profiles) printProfile(profile, TOP_FRAMES);
  process.stdout.write(`\nchecks: ${problems.length === 0 ? 'all passed' : problems.join('; ')}\n`);

  writeResultsUnlessQuick('llm-proxy', s.quick, {
    settings: { ...s, loadAverageAtStart: loadavg() },
    portkey: portkeyInfo,
    summary: summaries,
    comparisons,
    sequential: { runs: sequential, added, warmUp },
    publicMethod: publicRuns,
    profiles,
    checks: { problems },
    runs,
  });
  if (problems.length > 0) process.exitCode = 1;
}

/**
 * A service started for the warm-up curve alone, on the same config: probed once (its answer
 * checked), then its first requests timed in blocks; stopped after.
 */
async function freshWarmUp(upstream: OpenAiUpstream, key: ApiKey, s: Settings): Promise<WarmUpBlock[]> {
  const fresh = await startService(serviceConfig(upstream, key, s.connections), { name: 'service-fresh' });
  try {
    const endpoint = serviceEndpoint(fresh.base, key, false);
    const wrong = await probe('service', endpoint, upstream, 1);
    if (wrong) throw new Error(`the fresh service: ${wrong}`);
    return await warmUpCurve(
      endpoint,
      directEndpoint(upstream),
      s.quick ? 2 : WARM_UP_BLOCKS,
      s.quick ? 50 : WARM_UP_BLOCK_SIZE,
    );
  } finally {
    await fresh.stop();
  }
}

/**
 * The public method's sides, each started afresh for every run: the service as `npm start` runs
 * it, the same without its warm-up (what the warm-up buys, in the same run), and Portkey.
 */
function publicMethodSides(upstream: OpenAiUpstream, key: ApiKey, s: Settings, withPortkey: boolean) {
  const service = (name: string, warmUpMs?: number) => async (): Promise<FreshGateway> => {
    const config = serviceConfig(upstream, key, s.connections);
    const started = await startService(warmUpMs === undefined ? config : { ...config, server: { warmUpMs } }, {
      name,
    });
    return { endpoint: serviceEndpoint(started.base, key, false), stop: () => started.stop() };
  };
  const portkey = async (): Promise<FreshGateway> => {
    const started = await startPortkey(true);
    const child = started.child;
    if (!child || !started.base) throw new Error(`Portkey did not start: ${JSON.stringify(started.info)}`);
    return { endpoint: portkeyEndpoint(started.base, upstream), stop: () => stopChild(child) };
  };
  return [
    { side: 'service', start: service('service-public') },
    { side: 'service, no warm-up', start: service('service-cold', 0) },
    ...(withPortkey ? [{ side: 'portkey', start: portkey }] : []),
  ];
}

const chosen = settings();
// Start-up (service and Portkey side by side), warm-up, the rounds, the profile; half as much
// again for a slow machine.
const estimateMs =
  12_000 +
  SIDES.length * 1_000 +
  chosen.pairs * SIDES.length * (chosen.durationS * 1_000 + 600) +
  (chosen.profile ? 12_000 : 0) +
  // One request at a time takes about a millisecond through the service.
  SEQUENTIAL_ROUNDS * SEQUENTIAL_SIDES.length * chosen.sequential * 1.5 +
  // The fresh service's start and its warm-up blocks (direct's too).
  5_000 +
  WARM_UP_BLOCKS * WARM_UP_BLOCK_SIZE * 2 * 1.5 +
  // The public method: three fresh processes a run (each started, warmed, 365 calls and as many direct).
  chosen.publicRuns * 3 * 12_000;
runMain('llm-proxy', () => main(chosen), { budgetMs: Math.max(BUDGET_MS, 1.5 * estimateMs) });
