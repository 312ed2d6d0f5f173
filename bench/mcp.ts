/**
 * MCP (issue 17): what does a tool call cost over `/mcp` next to the REST route, and what does
 * Bulkhead's `kind: mcp` tool cost next to calling its upstream MCP server directly?
 *
 *   npm run bench -- mcp [options]
 *
 * Options:
 *   --pairs N      rounds, each one run of every side, alternated (default 4, at least 4)
 *   --duration S   seconds per measured run (default 2)
 *   --workers N    closed-loop callers per side, each with one call in flight (default 16)
 *   --quick        1 round of 0.5 s: does it still run? (no results written)
 *   --profile      also a CPU profile of the service (a process of its own under V8's sampler)
 *                  under the rest, mcp-sse and via-bulkhead sides' load in turn, then of the JSON
 *                  service under mcp-json's: the top frames by self time, by package, and in
 *                  Bulkhead's own code, per side (about 25 s more)
 *
 * One call, the builtin `echo` with `{}`, for the same API-key tenant, four ways (bench/mcp/sides.ts):
 * the REST route (the baseline), raw JSON-RPC `tools/call` on `/mcp` answered as an event stream
 * (the default) and as JSON (a second service with `mcp.responses: json`), and the official MCP
 * SDK client's `callTool`. Every side goes through the same pipeline (lane, breaker, ledger,
 * metrics); what differs is the transport: the SDK's Streamable HTTP transport and protocol layer
 * (a session looked up, the message checked against the protocol's schemas, the result
 * checked on its way out), the tool result as text and structuredContent, SSE framing. The raw
 * sides and the REST side use the same closed loop (bench/mcp/closed-loop.ts) in this process;
 * the services are `node dist/main.js` in processes of their own, on loopback.
 *
 * Then an upstream MCP server (the SDK's McpServer, bench/mcp/upstream-mcp.ts, a process of its
 * own) with one tool, `echo`, two ways: raw JSON-RPC `tools/call` to it directly (each caller a
 * session of its own), and the same call of `up.echo` on the SSE service's `/mcp`, a `kind: mcp`
 * tool of that server: Bulkhead's whole pipeline, then the upstream call through the tenant's
 * session on the normal pool (every caller is the same tenant: one session carries its calls).
 *
 * Figures per side: calls/s, p50 and p99, and the service's CPU time per call (from /proc: the
 * steadiest figure, which does not depend on who was the bottleneck on two shared cores), and on
 * the upstream sides the upstream's too. Ratios to REST, and of via-bulkhead to upstream-direct,
 * per round, summarised as median (min-max). Prints tables and writes bench/results/mcp.json.
 * Exits 1 if a check fails: a call failed, the metrics do not count every call with its
 * transport, or the upstream did not see every call made through Bulkhead. About 60 s; bounded
 * at 150 s.
 */
import { loadavg } from 'node:os';
import { cpuSecondsOf } from './support/cpu';
import { option, runOptions } from './support/options';
import { runMain } from './support/processes';
import { fixed, printTable, range, writeResultsUnlessQuick } from './support/report';
import { apiKey, type Service, startService } from './support/service';
import { pairedRatio, summary } from './support/stats';
import { type LoopResult, runClosedLoop } from './mcp/closed-loop';
import {
  type Endpoint,
  rawMcpCallers,
  restCallers,
  sdkCallers,
  type Side,
  type SideCallers,
  SIDES,
  UPSTREAM_SIDES,
} from './mcp/sides';
import { JSON_SIDES, printProfile, profileService, type ProfileSummary, SSE_SIDES } from './mcp/profile';
import { startUpstreamMcp, type UpstreamMcp } from './mcp/upstream-mcp';

const BUDGET_MS = 150_000;
const WARM_UP_S = 0.5;
const PROFILE_S = 4;
const TOP_FRAMES = 25;

type Run = LoopResult & { side: Side; round: number; serviceCpuUsPerCall: number; upstreamCpuUsPerCall: number };

const ALL_SIDES: readonly Side[] = [...SIDES, ...UPSTREAM_SIDES];

function settings() {
  return {
    ...runOptions({ connections: 16, durationS: 2 }),
    workers: option('workers', 16, 1),
    profile: process.argv.includes('--profile'),
  };
}

function serviceConfig(entry: { sha256: string; tenant: string }, responses: 'sse' | 'json', upstreamUrl: string) {
  return {
    server: { shutdownDrainMs: 1_000 },
    auth: { allowAnonymous: false, apiKeys: [entry] },
    lanes: { tools: { concurrency: 64, queueCapacity: 64 } },
    tools: {
      echo: { kind: 'builtin', builtin: 'echo', lane: 'tools' },
      up: { kind: 'mcp', url: upstreamUrl, tools: ['echo'], lane: 'tools' },
    },
    // The loopback upstream is a private address: allowed here as a deployment would allow its own.
    containment: { egress: { allowHosts: ['127.0.0.1'], allowPrivateCidrs: ['127.0.0.0/8'] } },
    mcp: { responses, maxSessions: 1_000, maxSessionsPerTenant: 1_000 },
  };
}

/** The service's calls of `tool` by transport, from its metrics. */
async function callsByTransport(service: Service, tool = 'echo'): Promise<{ http: number; mcp: number }> {
  const samples = (await service.metrics()).samples.filter(
    (sample) => sample.name === 'bulkhead_calls_total' && sample.labels.tool === tool,
  );
  const count = (transport: string) =>
    samples.filter((sample) => sample.labels.transport === transport).reduce((sum, sample) => sum + sample.value, 0);
  return { http: count('http'), mcp: count('mcp') };
}

async function main(s: ReturnType<typeof settings>): Promise<void> {
  const key = apiKey('agent');
  const upstream = await startUpstreamMcp();
  const sse = await startService(serviceConfig(key.entry, 'sse', upstream.url), { name: 'service-sse' });
  const json = await startService(serviceConfig(key.entry, 'json', upstream.url), { name: 'service-json' });
  const endpoint = (service: Service): Endpoint => ({ base: service.base, headers: key.headers });
  const serviceOf: Record<Side, Service> = {
    rest: sse,
    'mcp-sse': sse,
    'mcp-json': json,
    'sdk-client': sse,
    'upstream-direct': sse,
    'via-bulkhead': sse,
  };
  const callersOf: Record<Side, SideCallers> = {
    rest: restCallers(endpoint(sse), s.workers),
    'mcp-sse': await rawMcpCallers(endpoint(sse), s.workers),
    'mcp-json': await rawMcpCallers(endpoint(json), s.workers),
    'sdk-client': await sdkCallers(endpoint(sse), s.workers),
    'upstream-direct': await rawMcpCallers({ base: upstream.base, headers: {} }, s.workers),
    'via-bulkhead': await rawMcpCallers(endpoint(sse), s.workers, 'up.echo'),
  };
  process.stdout.write(
    `mcp: ${s.workers} callers per side, ${s.pairs} round(s) of ${s.durationS} s, load ${loadavg()[0]!.toFixed(2)}\n`,
  );

  for (const side of ALL_SIDES) await runClosedLoop(callersOf[side].callers, s.quick ? 0.2 : WARM_UP_S);
  const before = {
    sse: await callsByTransport(sse),
    json: await callsByTransport(json),
    via: await callsByTransport(sse, 'up.echo'),
    upstream: (await upstream.stats()).calls,
  };
  const runs: Run[] = [];
  for (let round = 1; round <= s.pairs; round++) {
    for (const side of ALL_SIDES) runs.push(await measure(side, round, callersOf[side], serviceOf[side], upstream, s));
  }
  const after = {
    sse: await callsByTransport(sse),
    json: await callsByTransport(json),
    via: await callsByTransport(sse, 'up.echo'),
    upstream: (await upstream.stats()).calls,
  };
  for (const side of ALL_SIDES) await callersOf[side].close();

  const of = (side: Side) => runs.filter((run) => run.side === side);
  const sides = ALL_SIDES.map((side) => ({
    side,
    'calls/s': range(summary(of(side).map((run) => run.reqPerS)), 0),
    'p50 ms': range(summary(of(side).map((run) => run.p50Ms))),
    'p99 ms': range(summary(of(side).map((run) => run.p99Ms))),
    'service CPU µs/call':
      side === 'upstream-direct' ? '-' : range(summary(of(side).map((run) => run.serviceCpuUsPerCall)), 1),
    'upstream CPU µs/call': UPSTREAM_SIDES.includes(side)
      ? range(summary(of(side).map((run) => run.upstreamCpuUsPerCall)), 1)
      : '-',
  }));
  /** Per round, `side`'s figure over `baseline`'s, summarised. */
  const paired = (baseline: Side, side: Side, pick: (run: Run) => number) =>
    range(pairedRatio(of(baseline).map(pick), of(side).map(pick)), 3);
  const ratios = SIDES.filter((side) => side !== 'rest').map((side) => ({
    side: `${side} / rest`,
    'calls/s': paired('rest', side, (run) => run.reqPerS),
    p50: paired('rest', side, (run) => run.p50Ms),
    'service CPU/call': paired('rest', side, (run) => run.serviceCpuUsPerCall),
  }));
  const direct = of('upstream-direct');
  const via = of('via-bulkhead');
  const upstreamRatio = {
    side: 'via-bulkhead / upstream-direct',
    'calls/s': paired('upstream-direct', 'via-bulkhead', (run) => run.reqPerS),
    p50: paired('upstream-direct', 'via-bulkhead', (run) => run.p50Ms),
    'p50 added ms': range(summary(via.map((run, index) => run.p50Ms - direct[index]!.p50Ms))),
    'upstream CPU/call': paired('upstream-direct', 'via-bulkhead', (run) => run.upstreamCpuUsPerCall),
  };
  printTable('sides (median (min-max) of the rounds)', sides);
  printTable('over MCP vs the REST route (per round)', ratios);
  printTable('an upstream MCP server through Bulkhead (kind: mcp) vs directly (per round)', [upstreamRatio]);

  const problems: string[] = [];
  const failed = runs.reduce((sum, run) => sum + run.failed, 0);
  if (failed > 0) problems.push(`${failed} calls failed`);
  const measured = (side: Side) => of(side).reduce((sum, run) => sum + run.ok + run.failed, 0);
  const counted = {
    http: after.sse.http - before.sse.http,
    mcp: after.sse.mcp - before.sse.mcp + after.json.mcp - before.json.mcp,
    via: after.via.mcp - before.via.mcp,
    upstream: after.upstream - before.upstream,
  };
  const expected = {
    http: measured('rest'),
    mcp: measured('mcp-sse') + measured('mcp-json') + measured('sdk-client'),
    via: measured('via-bulkhead'),
    upstream: measured('upstream-direct') + measured('via-bulkhead'),
  };
  // A call a run's deadline cut off may still be counted after the reading: allow the callers' worth.
  const near = (got: number, want: number) => got >= want && got <= want + ALL_SIDES.length * s.workers;
  for (const what of ['http', 'mcp', 'via', 'upstream'] as const) {
    if (!near(counted[what], expected[what])) {
      problems.push(`counted ${JSON.stringify(counted)} calls, the callers made ${JSON.stringify(expected)}`);
      break;
    }
  }
  printTable('checks', [{ 'failed calls': failed, counted: JSON.stringify(counted) }]);

  await Promise.all([sse.stop(), json.stop()]);
  const profiles: ProfileSummary[] = [];
  if (s.profile) {
    const profiled = { workers: s.workers, warmUpS: s.quick ? 0.2 : 1, durationS: s.quick ? 1 : PROFILE_S };
    for (const [responses, sides] of [
      ['sse', SSE_SIDES],
      ['json', JSON_SIDES],
    ] as const) {
      profiles.push(
        ...(await profileService(serviceConfig(key.entry, responses, upstream.url), sides, key.headers, profiled)),
      );
    }
  }
  for (const profile of profiles) printProfile(profile, TOP_FRAMES);

  writeResultsUnlessQuick('mcp', s.quick, {
    settings: s,
    runs,
    sides,
    ratios,
    upstreamRatio,
    counted,
    expected,
    problems,
    profiles,
  });
  await upstream.stop();
  if (problems.length > 0) throw new Error(`mcp: ${problems.join('; ')}`);
}

/** One run of `side`: its loop, and the CPU the service and the upstream spent on it. */
async function measure(
  side: Side,
  round: number,
  callers: SideCallers,
  service: Service,
  upstream: UpstreamMcp,
  s: ReturnType<typeof settings>,
): Promise<Run> {
  const pid = service.child.process.pid;
  const upstreamPid = upstream.child.process.pid;
  const cpuBefore = cpuSecondsOf(pid);
  const upstreamBefore = cpuSecondsOf(upstreamPid);
  const result = await runClosedLoop(callers.callers, s.durationS);
  const calls = Math.max(1, result.ok + result.failed);
  const cpuUs = (cpuSecondsOf(pid) - cpuBefore) * 1e6;
  const upstreamCpuUs = (cpuSecondsOf(upstreamPid) - upstreamBefore) * 1e6;
  process.stdout.write(
    `round ${round} ${side.padEnd(15)} ${fixed(result.reqPerS, 0)} calls/s, p50 ${fixed(result.p50Ms)} ms, ` +
      `p99 ${fixed(result.p99Ms)} ms, service CPU ${fixed(cpuUs / calls, 0)} µs/call, ` +
      `upstream CPU ${fixed(upstreamCpuUs / calls, 0)} µs/call\n`,
  );
  return { ...result, side, round, serviceCpuUsPerCall: cpuUs / calls, upstreamCpuUsPerCall: upstreamCpuUs / calls };
}

const chosen = settings();
runMain('mcp', () => main(chosen), { budgetMs: BUDGET_MS + (chosen.profile ? 30_000 : 0) });
