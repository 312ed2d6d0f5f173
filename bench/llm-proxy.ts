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
 *   --no-portkey     leave Portkey out even if it is installed
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
 * autocannon.
 *
 * Sides, each POSTing the same short chat request (a system and a user message):
 *   direct   the server's `/v1/chat/completions` itself (the baseline);
 *   service  the route `chat` (`cache: false`): auth, containment routing, the request parsed and
 *            checked, the lane, the breaker, the provider's request built, undici to the server,
 *            the answer parsed and checked, the cost computed, the answer with its headers;
 *   cached   the route `chat-cached` (the same target, the exact cache on): after the warm-up,
 *            every request is a hit and never reaches the server;
 *   tool     an http tool of the same service forwarding the same request to the server
 *            (`POST /v1/tools/chat_tool/invoke`, the request as its arguments): the service's
 *            plain proxy path, to tell the LLM route's own cost from the service's;
 *   portkey  Portkey's `/v1/chat/completions` with `x-portkey-provider: openai` and
 *            `x-portkey-custom-host: <server>/v1`: its OpenAI provider, forwarding to the server.
 * Each round runs direct, service, cached, tool, portkey once, in that order; a ratio "per
 * round" is X/Y within a round, summarised as median (min-max). The route `chat` has its cache
 * off because a hit would measure the cache, not the proxying: the cache's cost is the `cached`
 * side's, measured on its own. Each side names itself in the request's `user`, so the server
 * counts its requests apart from a previous side's stragglers.
 *
 * Figures: p50, p99 (of the checked 2xx answers, each response's own time), checked 2xx/s, and
 * the CPU each process used per such answer (from /proc). Prints tables and writes
 * bench/results/llm-proxy.json. Exits 1 if a check fails: an answer that was not 200 with the
 * upstream's text and usage (every answer is checked, Portkey's too), a proxied answer that did
 * not reach the server once, a cache hit that did, a request the server refused, the service's
 * metrics not showing every call through the normal pool and the right route, or a process
 * still running at the end. About 55 s (70 s with --profile); bounded at about 105 s (more with
 * more rounds, longer runs or --profile). `--quick` takes about 9 s, warm-up left out.
 */
import { cpus, loadavg } from 'node:os';
import { type PortkeyInfo, startPortkey } from './proxy/portkey';
import { runCheckedLoad } from './llm-proxy/checked-load';
import { type OpenAiUpstream, startOpenAiUpstream } from './llm-proxy/openai-upstream';
import { printProfile, profileService } from './llm-proxy/profile';
import {
  CACHED_ROUTE,
  directEndpoint,
  type Endpoint,
  portkeyEndpoint,
  probe,
  ROUTE,
  serviceConfig,
  serviceEndpoint,
  TARGET_LABEL,
  toolEndpoint,
  userOf,
} from './llm-proxy/sides';
import { check, compare, type Cpu, type Run, type Side, SIDES, summarise, type Summary } from './llm-proxy/summary';
import { cpuSecondsOf, ownCpuSeconds } from './support/cpu';
import { type Child, runMain, stopChild } from './support/processes';
import { fixed, printTable, range, writeResults } from './support/report';
import { apiKey, type Service, startService, waitUntil } from './support/service';
import { runOptions } from './support/options';

const BUDGET_MS = 100_000;
const PROFILE_S = 3;
const TOP_FRAMES = 15;
const QUIET_MS = 250;

interface Settings {
  pairs: number;
  durationS: number;
  connections: number;
  portkey: boolean;
  profile: boolean;
  quick: boolean;
}

function settings(): Settings {
  return {
    ...runOptions({ connections: 32, durationS: 2 }),
    portkey: !process.argv.includes('--no-portkey'),
    profile: process.argv.includes('--profile'),
  };
}

// ---------------------------------------------------------------------------------------------

async function main(s: Settings): Promise<void> {
  const key = apiKey('agent');
  const upstream = await startOpenAiUpstream();
  const [service, portkey] = await Promise.all([
    startService(serviceConfig(upstream, key, s.connections)),
    s.portkey
      ? startPortkey()
      : Promise.resolve({ info: { available: false, reason: '--no-portkey' } as PortkeyInfo, child: undefined }),
  ]);

  const endpoints: Partial<Record<Side, Endpoint>> = {
    direct: directEndpoint(upstream),
    service: serviceEndpoint(service.base, key, false),
    cached: serviceEndpoint(service.base, key, true),
    tool: toolEndpoint(service.base, key),
  };
  // The cached side's first request fills the cache; its second is a hit.
  const probes: Array<[Side, number]> = [
    ['direct', 1],
    ['service', 1],
    ['cached', 1],
    ['cached', 0],
    ['tool', 1],
  ];
  for (const [side, reaches] of probes) {
    const wrong = await probe(side, endpoints[side]!, upstream, reaches);
    if (wrong) throw new Error(wrong);
  }

  const portkeyInfo = portkey.info;
  if (portkey.child && 'base' in portkey && portkey.base) {
    const endpoint = portkeyEndpoint(portkey.base, upstream);
    const wrong = await probe('portkey', endpoint, upstream, 1);
    if (!wrong) endpoints.portkey = endpoint;
    else {
      portkeyInfo.available = false;
      portkeyInfo.reason = `${wrong}; its output: ${portkey.child.output().slice(-800)}`;
      await stopChild(portkey.child);
    }
  }
  const sides = SIDES.filter((side) => endpoints[side]);

  process.stdout.write(
    `llm-proxy: ${s.pairs} rounds of ${sides.join(', ')}, ${s.durationS} s each, ${s.connections} connections\n` +
      `portkey: ${
        portkeyInfo.available
          ? `${portkeyInfo.version} (@hono/node-server ${portkeyInfo.honoNodeServer ?? '?'}${portkeyInfo.fetchShim ? ', with the fetch shim' : ''})`
          : `left out: ${portkeyInfo.reason}`
      }\n` +
      `node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()
        .map((load) => load.toFixed(2))
        .join(' ')}\n`,
  );

  const pids = {
    service: service.child.process.pid,
    portkey: portkey.child?.process.pid,
    upstream: upstream.child.process.pid,
  };
  const cpuNow = (): Cpu => ({
    service: cpuSecondsOf(pids.service),
    portkey: portkeyInfo.available ? cpuSecondsOf(pids.portkey) : Number.NaN,
    upstream: cpuSecondsOf(pids.upstream),
    loadGenerator: ownCpuSeconds(),
  });
  const load = (side: Side, durationS: number) =>
    runCheckedLoad({ ...endpoints[side]!, connections: s.connections, durationS });

  const measure = async (side: Side, round: number): Promise<Run> => {
    const before = await settle(upstream);
    const cpuBefore = cpuNow();
    const result = await load(side, s.durationS);
    const cpuAfter = cpuNow();
    const after = await upstream.stats();
    const used = (name: keyof Cpu) => (cpuAfter[name] - cpuBefore[name]) / result.durationS;
    const run: Run = {
      round,
      side,
      ...result,
      upstreamRequests: (after.byUser[userOf(side)] ?? 0) - (before.byUser[userOf(side)] ?? 0),
      upstreamRejected: after.rejected - before.rejected,
      cpuCores: {
        service: used('service'),
        portkey: used('portkey'),
        upstream: used('upstream'),
        loadGenerator: used('loadGenerator'),
      },
    };
    const failed = run.non2xx + run.errors + run.wrong2xx;
    process.stdout.write(
      `  round ${round} ${side.padEnd(7)}: p50 ${fixed(run.p50Ms)} ms, p99 ${fixed(run.p99Ms)} ms, ` +
        `${fixed(run.reqPerS, 0)} req/s${failed ? `, ${run.non2xx} non-2xx, ${run.wrong2xx} wrong, ${run.errors} errors` : ''}; ` +
        `CPU cores: service ${fixed(run.cpuCores.service)}, portkey ${fixed(run.cpuCores.portkey)}, ` +
        `upstream ${fixed(run.cpuCores.upstream)}, load generator ${fixed(run.cpuCores.loadGenerator)}\n`,
    );
    return run;
  };

  // Warm-up, not measured: every path once (JIT, connection pools). A quick run only checks
  // that everything still runs, and the probes went every way once already.
  if (!s.quick) for (const side of sides) await load(side, 1);

  const runs: Run[] = [];
  for (let round = 1; round <= s.pairs; round++) {
    for (const side of sides) runs.push(await measure(side, round));
  }

  const problems = check(runs, s.connections);
  problems.push(...(await checkMetrics(service, runs, s.connections)));

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
  const children: Child[] = [service.child, upstream.child, ...(portkey.child ? [portkey.child] : [])];
  await Promise.all(children.map((child) => stopChild(child)));
  for (const child of children) {
    if (isAlive(child.process.pid)) problems.push(`${child.name} (pid ${child.process.pid}) is still running`);
  }

  const of = (side: Side) => runs.filter((run) => run.side === side);
  const summaries = Object.fromEntries(sides.map((side) => [side, summarise(of(side))])) as Partial<
    Record<Side, Summary>
  >;
  const pairs: Array<[Side, Side]> = [
    ['service', 'direct'],
    ['service', 'portkey'],
    ['portkey', 'direct'],
    ['cached', 'direct'],
    ['cached', 'service'],
    ['service', 'tool'],
    ['tool', 'direct'],
  ];
  const comparisons = pairs
    .filter(([x, y]) => summaries[x] && summaries[y])
    .map(([x, y]) => compare(x, of(x), y, of(y)));

  printTable(
    'per side, median (min-max) over the rounds',
    sides.map((side) => {
      const summary = summaries[side]!;
      return {
        side,
        'p50 ms': range(summary.p50Ms),
        'p99 ms': range(summary.p99Ms),
        'req/s': range(summary.reqPerS, 0),
        'service µs/call': fixed(summary.cpuUsPerCall.service, 0),
        'portkey µs/call': fixed(summary.cpuUsPerCall.portkey, 0),
        'upstream µs/call': fixed(summary.cpuUsPerCall.upstream, 0),
        'load gen µs/call': fixed(summary.cpuUsPerCall.loadGenerator, 0),
        failed: String(summary.failed),
      };
    }),
  );
  printTable(
    'ratios: per round, median (min-max); then of the medians (server CPU per call: the proxy over the other server)',
    comparisons.flatMap((c) => [
      {
        ratio: `${c.name} per round`,
        'p50 ms': range(c.perRound.p50Ms, 3),
        'p99 ms': range(c.perRound.p99Ms, 3),
        'req/s': range(c.perRound.reqPerS, 3),
        'server CPU/call': '',
      },
      {
        ratio: `${c.name} of medians`,
        'p50 ms': fixed(c.ofMedians.p50Ms, 3),
        'p99 ms': fixed(c.ofMedians.p99Ms, 3),
        'req/s': fixed(c.ofMedians.reqPerS, 3),
        'server CPU/call': fixed(c.serverCpu, 3),
      },
    ]),
  );
  for (const profile of profiles) printProfile(profile, TOP_FRAMES);
  process.stdout.write(`\nchecks: ${problems.length === 0 ? 'all passed' : problems.join('; ')}\n`);

  if (s.quick) process.stdout.write('quick mode: results not written\n');
  else {
    const file = writeResults('llm-proxy', {
      settings: { ...s, loadAverageAtStart: loadavg() },
      portkey: portkeyInfo,
      summary: summaries,
      comparisons,
      profiles,
      checks: { problems },
      runs,
    });
    process.stdout.write(`wrote ${file}\n`);
  }
  if (problems.length > 0) process.exitCode = 1;
}

/**
 * Until the upstream has held no call for {@link QUIET_MS}: a client leaving does not end a
 * proxy's calls, and a busy Portkey still forwards what it had read for a while after.
 */
async function settle(upstream: OpenAiUpstream) {
  let last = await upstream.stats();
  let quietSince = performance.now();
  await waitUntil(
    'the upstream is idle',
    async () => {
      const now = await upstream.stats();
      if (now.inFlight > 0 || now.requests !== last.requests) quietSince = performance.now();
      last = now;
      return performance.now() - quietSince >= QUIET_MS;
    },
    10_000,
    50,
  );
  return last;
}

/**
 * The service's own account of the runs: every call routed to the normal pool, the uncached
 * route's answers each one attempt at the target, the cached route's answers hits.
 */
async function checkMetrics(service: Service, runs: Run[], connections: number): Promise<string[]> {
  const { samples } = await service.metrics();
  const sum = (name: string, labels: Record<string, string>) =>
    samples
      .filter((sample) => sample.name === name && Object.entries(labels).every(([k, v]) => sample.labels[k] === v))
      .reduce((total, sample) => total + sample.value, 0);
  const answered = (side: Side) => runs.filter((run) => run.side === side).reduce((total, run) => total + run.ok, 0);
  const problems: string[] = [];
  const routed = samples.filter((sample) => sample.name === 'bulkhead_containment_routes_total' && sample.value > 0);
  const elsewhere = routed.filter((sample) => sample.labels.pool !== 'normal');
  if (routed.length === 0 || elsewhere.length > 0) {
    problems.push(`calls were not all routed to the normal pool: ${JSON.stringify(routed)}`);
  }
  const attempts = sum('bulkhead_llm_requests_total', { route: ROUTE, target: TARGET_LABEL, outcome: 'ok' });
  if (attempts < answered('service')) {
    problems.push(`${answered('service')} answers of route ${ROUTE} but ${attempts} good attempts at ${TARGET_LABEL}`);
  }
  // A run's end leaves up to one call per connection whose client left: `stopped`, not failed.
  const cut = runs.filter((run) => run.side === 'service').length + 1;
  const stopped = sum('bulkhead_llm_requests_total', { outcome: 'stopped' });
  const failed =
    sum('bulkhead_llm_requests_total', {}) - sum('bulkhead_llm_requests_total', { outcome: 'ok' }) - stopped;
  if (failed > 0 || stopped > cut * connections) {
    const outcomes = samples
      .filter((sample) => sample.name === 'bulkhead_llm_requests_total')
      .map((sample) => `${sample.labels.route} ${sample.labels.outcome} ${sample.value}`);
    problems.push(`attempts at a target failed, or more were stopped than runs cut: ${outcomes.join(', ')}`);
  }
  const hits = sum('bulkhead_llm_cache_total', { route: CACHED_ROUTE, result: 'hit' });
  if (hits < answered('cached'))
    problems.push(`${answered('cached')} answers of ${CACHED_ROUTE} but ${hits} cache hits`);
  return problems;
}

function isAlive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const chosen = settings();
// Start-up (service and Portkey side by side), warm-up, the rounds, the profile; half as much
// again for a slow machine.
const estimateMs =
  12_000 + 5 * 1_000 + chosen.pairs * 5 * (chosen.durationS * 1_000 + 600) + (chosen.profile ? 12_000 : 0);
runMain('llm-proxy', () => main(chosen), { budgetMs: Math.max(BUDGET_MS, 1.5 * estimateMs) });
