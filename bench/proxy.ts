/**
 * Proxy benchmark (issue 6, item 3; issue 16, item 2): what does forwarding a call through the
 * service's `http` tool cost, against calling the upstream directly, against a forwarder written
 * by hand (the physical limit of a proxy), and against the Portkey AI gateway doing the same
 * forwarding?
 *
 *   npm run bench -- proxy [options]
 *
 * Options:
 *   --pairs N        rounds, each running every target once in turn (default 4, at least 4)
 *   --duration S     seconds per measured run (default 2)
 *   --connections N  autocannon connections (default 32)
 *   --no-portkey     leave Portkey out even if it is installed
 *   --profile        also CPU profiles (V8's sampler, a process of its own each, 3 s of load
 *                    after the rounds) of the service and of the forwarder: the top self-time
 *                    frames of each, and what separates them by where the code lives
 *   --quick          1 round of 0.5 s: does it still run? (no results written)
 *
 * Processes, all on loopback: the upstream (bench/support/upstream-server.ts; `/fast` answers
 * `{"ok":true}` at once), the service (`node dist/main.js`: one API-key tenant, routed to the
 * normal pool, an http tool `fast` forwarding to the upstream's `/fast` in a lane too big to
 * limit, egress 127.0.0.1/32 only), the forwarder (bench/proxy/forwarder.ts: a `node:http`
 * server that sends each request's body on with `undici.request` to the upstream's `/fast` and
 * answers with what comes back; no framework, no checks), Portkey's gateway if
 * `@portkey-ai/gateway` is installed (a devDependency, `build/start-server.js --port=N
 * --headless`), and this one, autocannon.
 *
 * Targets, each POSTing `{}`-sized JSON the way the service's tool does:
 *   direct   the upstream's `/fast` itself (the baseline);
 *   forwarder the hand-written forwarder, sent the very bytes the service is sent;
 *   service  `POST /v1/tools/fast/invoke` with the API key: auth, containment routing, lane,
 *            breaker, egress policy, then undici to the upstream;
 *   portkey  `POST /v1/proxy/fast` with `x-portkey-provider: openai` and
 *            `x-portkey-custom-host: http://127.0.0.1:<upstream port>`: Portkey forwards it to
 *            `<custom host>/fast` (its proxy route, which skips the header validation of `/v1/*`).
 * Each round runs direct, forwarder, service, portkey once, in that order (A B C D A B C D ...);
 * a ratio "per round" is X/Y within a round, summarised as median (min-max).
 *
 * Portkey 1.15.2 needs a small fetch-response shim to run here (Portkey-AI/gateway#1389; see
 * bench/proxy/portkey.ts).
 *
 * Figures: p50, p99 (of 2xx answers, each response's own time), 2xx/s, and the CPU each
 * process used per 2xx call (from /proc). Targets: service/direct throughput >= 0.6 (and p99 no
 * worse than 1/0.6 of direct's); service/forwarder throughput >= 0.8; service/portkey
 * throughput >= 10 with p99 <= 0.2 of Portkey's.
 * Prints tables and writes bench/results/proxy.json. Exits 1 if a check fails (a direct or
 * service call failed, the service's calls did not go through the normal pool, or a target's
 * calls did not all reach the upstream). About 40 s (50 s with --profile); bounded at 90 s.
 */
import { loadavg } from 'node:os';
import { startForwarder } from './proxy/forwarder';
import { describePortkey, leavePortkeyOut, startPortkey } from './proxy/portkey';
import { FORWARDER_CODE, printGap, profileProxies } from './proxy/profile';
import { check, type Run, type Target } from './proxy/summary';
import { runLoad } from './support/load';
import { printProfile } from './support/cpu-profile';
import { runMain, stopChild } from './support/processes';
import { fixed, writeResultsUnlessQuick } from './support/report';
import { compareRuns, cpuMeter, inRounds, summariseSides, withCpu } from './support/rounds';
import { printRatiosTable, printSidesTable, writeRunHeader, writeRunLine } from './support/rounds-report';
import { apiKey, call, startService, waitUntil } from './support/service';
import { startUpstream } from './support/upstream-server';
import { runOptions } from './support/options';

const BUDGET_MS = 90_000;
const TARGET_DIRECT_RATIO = 0.6;
const TARGET_FORWARDER_RATIO = 0.8;
const PROFILE_S = 3;
const TOP_FRAMES = 12;
const TARGET_PORTKEY_THROUGHPUT = 10;
const TARGET_PORTKEY_P99 = 0.2;
/** The ratios the tables show, x / y. */
const COMPARED: ReadonlyArray<readonly [Target, Target]> = [
  ['service', 'forwarder'],
  ['forwarder', 'direct'],
  ['service', 'direct'],
  ['portkey', 'direct'],
  ['service', 'portkey'],
];
type Settings = ReturnType<typeof settings>;

interface Endpoint {
  url: string;
  headers: Record<string, string>;
  body: string;
}

function settings() {
  return {
    ...runOptions({ connections: 32, durationS: 2 }),
    portkey: !process.argv.includes('--no-portkey'),
    profile: process.argv.includes('--profile'),
  };
}

// ---------------------------------------------------------------------------------------------

async function main(s: Settings): Promise<void> {
  const key = apiKey('agent');
  const upstream = await startUpstream();
  const serviceConfig = {
    auth: { allowAnonymous: false, apiKeys: [key.entry] },
    lanes: { proxy: { concurrency: 256, queueCapacity: 1024 } },
    tools: {
      fast: { lane: 'proxy', kind: 'http', url: upstream.url('/fast'), timeoutMs: 10_000, retry: { maxAttempts: 1 } },
    },
    containment: {
      // Above the connections: neither the lane nor the pool limits anything here.
      pools: { normalMaxConcurrency: 2 * s.connections },
      egress: { allowHosts: ['127.0.0.1'], allowPrivateCidrs: ['127.0.0.1/32'] },
    },
  };
  const [service, forwarder, portkey] = await Promise.all([
    startService(serviceConfig),
    startForwarder(upstream.url('/fast')),
    startPortkey(s.portkey),
  ]);

  /** A probe of `endpoint`: undefined when it answered `{"ok":true}` and reached the upstream once, else what went wrong. */
  const reachedOnce = async (endpoint: Endpoint) => {
    const before = (await upstream.stats()).fast.requests;
    const answer = await call(endpoint.url, { method: 'POST', headers: endpoint.headers, body: endpoint.body });
    const reached = (await upstream.stats()).fast.requests - before;
    if (answer.status === 200 && answer.text === '{"ok":true}' && reached === 1) return undefined;
    return `answered ${answer.status} ${answer.text.slice(0, 200)} (upstream reached ${reached} times)`;
  };

  const body = JSON.stringify({ arguments: {} });
  const serviceEndpoint = (base: string): Endpoint => ({
    url: `${base}/v1/tools/fast/invoke`,
    headers: key.headers,
    body,
  });
  const endpoints: Partial<Record<Target, Endpoint>> = {
    // What the tool sends upstream: its arguments as JSON.
    direct: { url: upstream.url('/fast'), headers: { 'content-type': 'application/json' }, body: '{}' },
    // The same bytes as the service's: the forwarder sends them on as they are.
    forwarder: serviceEndpoint(forwarder.base),
    service: serviceEndpoint(service.base),
  };

  // The service's calls go through the normal pool and reach the upstream.
  const probe = await service.call('/v1/tools/fast/invoke', { method: 'POST', headers: key.headers, body });
  if (probe.status !== 200) throw new Error(`probe of the service answered ${probe.status}: ${probe.text}`);
  const pool = (JSON.parse(probe.text) as { pool?: string }).pool;
  if (pool !== 'normal') throw new Error(`the service's call went through pool '${pool}', not 'normal': ${probe.text}`);
  // The forwarder answers with the upstream's own answer, having reached it once.
  const forwarded = await reachedOnce(endpoints.forwarder!);
  if (forwarded) throw new Error(`probe of the forwarder: ${forwarded}`);

  const portkeyInfo = portkey.info;
  if (portkey.child && portkey.base) {
    const endpoint: Endpoint = {
      url: `${portkey.base}/v1/proxy/fast`,
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer not-used',
        'x-portkey-provider': 'openai',
        'x-portkey-custom-host': upstream.base,
      },
      body: '{}',
    };
    const wrong = await reachedOnce(endpoint);
    if (!wrong) endpoints.portkey = endpoint;
    else await leavePortkeyOut(portkeyInfo, portkey.child, `its probe ${wrong}`);
  }
  const targets = (['direct', 'forwarder', 'service', 'portkey'] as const).filter((target) => endpoints[target]);

  writeRunHeader('proxy', s, targets, describePortkey(portkeyInfo));

  const cpuNow = cpuMeter({ service, upstream, portkey, forwarder });
  const load = (target: Target, durationS: number) =>
    runLoad({ ...endpoints[target]!, connections: s.connections, durationS });

  /** Until the upstream holds no call: a client leaving does not end a proxy's call upstream. */
  const settle = async () => {
    let last = -1;
    await waitUntil(
      'the upstream is idle',
      async () => {
        const { inFlight, requests } = (await upstream.stats()).fast;
        const idle = inFlight === 0 && requests === last;
        last = requests;
        return idle;
      },
      5_000,
      50,
    );
    return last;
  };

  const measure = async (target: Target, round: number): Promise<Run> => {
    const requestsBefore = await settle();
    const { result, cpuCores } = await withCpu(cpuNow, () => load(target, s.durationS));
    const upstreamRequests = (await upstream.stats()).fast.requests - requestsBefore;
    const run: Run = { round, target, ...result, upstreamRequests, cpuCores };
    writeRunLine(target, run);
    return run;
  };

  // Warm-up, not measured: every path once (JIT, connection pools).
  for (const target of targets) await load(target, s.quick ? 0.5 : 1);

  const runs = await inRounds(s.pairs, targets, measure);

  if (portkey.child) {
    await stopChild(portkey.child);
    const { code, signal } = await portkey.child.exited;
    process.stdout.write(`portkey stopped (${signal ?? `exit ${code}`})\n`);
  }
  await stopChild(forwarder.child);

  const profiles = s.profile
    ? await profileProxies(
        upstream,
        serviceConfig,
        { service: serviceEndpoint, forwarder: serviceEndpoint },
        { connections: s.connections, warmUpS: s.quick ? 0.5 : 1, durationS: s.quick ? 1 : PROFILE_S },
        settle,
      )
    : [];

  const { summaries, comparisons } = summariseSides(runs, (run) => run.target, targets, COMPARED, compareRuns);

  const serviceVsDirect = comparisons.find((c) => c.name === 'service / direct')!;
  const serviceVsForwarder = comparisons.find((c) => c.name === 'service / forwarder')!;
  const serviceVsPortkey = comparisons.find((c) => c.name === 'service / portkey');
  const targetsMet = {
    forwarderThroughput: serviceVsForwarder.perRound.reqPerS.median >= TARGET_FORWARDER_RATIO,
    directThroughput: serviceVsDirect.perRound.reqPerS.median >= TARGET_DIRECT_RATIO,
    directP99: serviceVsDirect.perRound.p99Ms.median <= 1 / TARGET_DIRECT_RATIO,
    portkeyThroughput: serviceVsPortkey ? serviceVsPortkey.perRound.reqPerS.median >= TARGET_PORTKEY_THROUGHPUT : null,
    portkeyP99: serviceVsPortkey ? serviceVsPortkey.perRound.p99Ms.median <= TARGET_PORTKEY_P99 : null,
  };
  const checks = check(runs, s.connections);
  // CPU per call of each proxy (its own process), the steadiest figure on a shared machine.
  const proxyCpu = {
    serviceUs: summaries.service!.cpuUsPerCall.service,
    forwarderUs: summaries.forwarder!.cpuUsPerCall.forwarder!,
  };

  printSidesTable('per target, median (min-max) over the rounds', 'target', targets, summaries);
  printRatiosTable('ratios: per round, median (min-max); then of the medians', comparisons);
  for (const profile of profiles) printProfile(profile, TOP_FRAMES, profile === profiles[1] ? FORWARDER_CODE : 'dist/');
  if (profiles.length === 2) printGap(profiles[0]!, profiles[1]!, TOP_FRAMES);
  const verdict = (met: boolean | null) => (met === null ? 'not measured' : met ? 'met' : 'NOT met');
  process.stdout.write(
    `\nservice / forwarder throughput ${fixed(serviceVsForwarder.perRound.reqPerS.median, 3)} ` +
      `(target >= ${TARGET_FORWARDER_RATIO}): ${verdict(targetsMet.forwarderThroughput)}; ` +
      `p99 ${fixed(serviceVsForwarder.perRound.p99Ms.median, 3)}; CPU per call ${fixed(proxyCpu.serviceUs, 1)} / ` +
      `${fixed(proxyCpu.forwarderUs, 1)} µs = ${fixed(proxyCpu.serviceUs / proxyCpu.forwarderUs, 2)}\n` +
      `service / direct throughput ${fixed(serviceVsDirect.perRound.reqPerS.median, 3)} (target >= ${TARGET_DIRECT_RATIO}): ` +
      `${verdict(targetsMet.directThroughput)}; p99 ${fixed(serviceVsDirect.perRound.p99Ms.median, 3)} ` +
      `(target <= ${fixed(1 / TARGET_DIRECT_RATIO, 3)}): ${verdict(targetsMet.directP99)}\n` +
      (serviceVsPortkey
        ? `service / portkey throughput ${fixed(serviceVsPortkey.perRound.reqPerS.median, 2)} (target >= ${TARGET_PORTKEY_THROUGHPUT}): ` +
          `${verdict(targetsMet.portkeyThroughput)}; p99 ${fixed(serviceVsPortkey.perRound.p99Ms.median, 3)} ` +
          `(target <= ${TARGET_PORTKEY_P99}): ${verdict(targetsMet.portkeyP99)}\n`
        : `portkey: not measured (${portkeyInfo.reason})\n`) +
      `checks: ${checks.problems.length === 0 ? 'all passed' : checks.problems.join('; ')}\n` +
      (checks.warnings.length > 0 ? `warnings: ${checks.warnings.join('; ')}\n` : ''),
  );

  writeResultsUnlessQuick('proxy', s.quick, {
    settings: { ...s, loadAverageAtStart: loadavg() },
    portkey: portkeyInfo,
    summary: summaries,
    comparisons,
    proxyCpu,
    targets: {
      serviceVsForwarder: { reqPerSAtLeast: TARGET_FORWARDER_RATIO },
      serviceVsDirect: { reqPerSAtLeast: TARGET_DIRECT_RATIO, p99AtMost: 1 / TARGET_DIRECT_RATIO },
      serviceVsPortkey: { reqPerSAtLeast: TARGET_PORTKEY_THROUGHPUT, p99AtMost: TARGET_PORTKEY_P99 },
      met: targetsMet,
    },
    profiles,
    checks,
    runs,
  });
  if (checks.problems.length > 0) process.exitCode = 1;
}

const chosen = settings();
// Start-up (service, forwarder and Portkey side by side), warm-up, the rounds, the profiles;
// half as much again for a slow machine.
const estimateMs =
  12_000 + 4 * 1_000 + chosen.pairs * 4 * (chosen.durationS * 1_000 + 300) + (chosen.profile ? 15_000 : 0);
runMain('proxy', () => main(chosen), { budgetMs: Math.max(BUDGET_MS, 1.5 * estimateMs) });
