/**
 * MCP (issue 17): what does a tool call cost over `/mcp` next to the REST route?
 *
 *   npm run bench -- mcp [options]
 *
 * Options:
 *   --pairs N      rounds, each one run of every side, alternated (default 4, at least 4)
 *   --duration S   seconds per measured run (default 2)
 *   --workers N    closed-loop callers per side, each with one call in flight (default 16)
 *   --quick        1 round of 0.5 s: does it still run? (no results written)
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
 * Figures per side: calls/s, p50 and p99, and the service's CPU time per call (from /proc: the
 * steadiest figure, which does not depend on who was the bottleneck on two shared cores). Ratios
 * to REST per round, summarised as median (min-max). Prints tables and writes
 * bench/results/mcp.json. Exits 1 if a check fails: a call failed, or the metrics do not count
 * every call with its transport. About 45 s; bounded at 100 s.
 */
import { loadavg } from 'node:os';
import { cpuSecondsOf } from './support/cpu';
import { option, runOptions } from './support/options';
import { runMain } from './support/processes';
import { fixed, printTable, range, writeResultsUnlessQuick } from './support/report';
import { apiKey, type Service, startService } from './support/service';
import { pairedRatio, summary } from './support/stats';
import { type LoopResult, runClosedLoop } from './mcp/closed-loop';
import { type Endpoint, rawMcpCallers, restCallers, sdkCallers, type Side, type SideCallers, SIDES } from './mcp/sides';

const BUDGET_MS = 100_000;
const WARM_UP_S = 0.5;

type Run = LoopResult & { side: Side; round: number; serviceCpuUsPerCall: number };

function settings() {
  return { ...runOptions({ connections: 16, durationS: 2 }), workers: option('workers', 16, 1) };
}

function serviceConfig(entry: { sha256: string; tenant: string }, responses: 'sse' | 'json') {
  return {
    server: { shutdownDrainMs: 1_000 },
    auth: { allowAnonymous: false, apiKeys: [entry] },
    lanes: { tools: { concurrency: 64, queueCapacity: 64 } },
    tools: { echo: { kind: 'builtin', builtin: 'echo', lane: 'tools' } },
    mcp: { responses, maxSessions: 1_000, maxSessionsPerTenant: 1_000 },
  };
}

/** The service's calls of `echo` by transport, from its metrics. */
async function callsByTransport(service: Service): Promise<{ http: number; mcp: number }> {
  const samples = (await service.metrics()).samples.filter(
    (sample) => sample.name === 'bulkhead_calls_total' && sample.labels.tool === 'echo',
  );
  const count = (transport: string) =>
    samples.filter((sample) => sample.labels.transport === transport).reduce((sum, sample) => sum + sample.value, 0);
  return { http: count('http'), mcp: count('mcp') };
}

async function main(s: ReturnType<typeof settings>): Promise<void> {
  const key = apiKey('agent');
  const sse = await startService(serviceConfig(key.entry, 'sse'), { name: 'service-sse' });
  const json = await startService(serviceConfig(key.entry, 'json'), { name: 'service-json' });
  const endpoint = (service: Service): Endpoint => ({ base: service.base, headers: key.headers });
  const serviceOf: Record<Side, Service> = { rest: sse, 'mcp-sse': sse, 'mcp-json': json, 'sdk-client': sse };
  const callersOf: Record<Side, SideCallers> = {
    rest: restCallers(endpoint(sse), s.workers),
    'mcp-sse': await rawMcpCallers(endpoint(sse), s.workers),
    'mcp-json': await rawMcpCallers(endpoint(json), s.workers),
    'sdk-client': await sdkCallers(endpoint(sse), s.workers),
  };
  process.stdout.write(
    `mcp: ${s.workers} callers per side, ${s.pairs} round(s) of ${s.durationS} s, load ${loadavg()[0]!.toFixed(2)}\n`,
  );

  for (const side of SIDES) await runClosedLoop(callersOf[side].callers, s.quick ? 0.2 : WARM_UP_S);
  const before = { sse: await callsByTransport(sse), json: await callsByTransport(json) };
  const runs: Run[] = [];
  for (let round = 1; round <= s.pairs; round++) {
    for (const side of SIDES) {
      const pid = serviceOf[side].child.process.pid;
      const cpuBefore = cpuSecondsOf(pid);
      const result = await runClosedLoop(callersOf[side].callers, s.durationS);
      const cpuUs = (cpuSecondsOf(pid) - cpuBefore) * 1e6;
      runs.push({ ...result, side, round, serviceCpuUsPerCall: cpuUs / Math.max(1, result.ok + result.failed) });
      process.stdout.write(
        `round ${round} ${side.padEnd(10)} ${fixed(result.reqPerS, 0)} calls/s, p50 ${fixed(result.p50Ms)} ms, ` +
          `p99 ${fixed(result.p99Ms)} ms, service CPU ${fixed(cpuUs / Math.max(1, result.ok), 0)} µs/call\n`,
      );
    }
  }
  const after = { sse: await callsByTransport(sse), json: await callsByTransport(json) };
  for (const side of SIDES) await callersOf[side].close();

  const of = (side: Side) => runs.filter((run) => run.side === side);
  const sides = SIDES.map((side) => ({
    side,
    'calls/s': range(summary(of(side).map((run) => run.reqPerS)), 0),
    'p50 ms': range(summary(of(side).map((run) => run.p50Ms))),
    'p99 ms': range(summary(of(side).map((run) => run.p99Ms))),
    'service CPU µs/call': range(summary(of(side).map((run) => run.serviceCpuUsPerCall)), 1),
  }));
  const rest = of('rest');
  const ratios = SIDES.filter((side) => side !== 'rest').map((side) => {
    const runsOf = of(side);
    return {
      side: `${side} / rest`,
      'calls/s': range(
        pairedRatio(
          rest.map((run) => run.reqPerS),
          runsOf.map((run) => run.reqPerS),
        ),
        3,
      ),
      p50: range(
        pairedRatio(
          rest.map((run) => run.p50Ms),
          runsOf.map((run) => run.p50Ms),
        ),
        3,
      ),
      'service CPU/call': range(
        pairedRatio(
          rest.map((run) => run.serviceCpuUsPerCall),
          runsOf.map((run) => run.serviceCpuUsPerCall),
        ),
        3,
      ),
    };
  });
  printTable('sides (median (min-max) of the rounds)', sides);
  printTable('over MCP vs the REST route (per round)', ratios);

  const problems: string[] = [];
  const failed = runs.reduce((sum, run) => sum + run.failed, 0);
  if (failed > 0) problems.push(`${failed} calls failed`);
  const measured = (side: Side) => of(side).reduce((sum, run) => sum + run.ok + run.failed, 0);
  const counted = {
    http: after.sse.http - before.sse.http,
    mcp: after.sse.mcp - before.sse.mcp + after.json.mcp - before.json.mcp,
  };
  const expected = { http: measured('rest'), mcp: measured('mcp-sse') + measured('mcp-json') + measured('sdk-client') };
  // A call a run's deadline cut off may still be counted after the reading: allow the callers' worth.
  const near = (got: number, want: number) => got >= want && got <= want + SIDES.length * s.workers;
  if (!near(counted.http, expected.http) || !near(counted.mcp, expected.mcp)) {
    problems.push(`metrics counted ${JSON.stringify(counted)} calls, the callers made ${JSON.stringify(expected)}`);
  }
  printTable('checks', [{ 'failed calls': failed, 'counted by transport': JSON.stringify(counted) }]);

  writeResultsUnlessQuick('mcp', s.quick, { settings: s, runs, sides, ratios, counted, expected, problems });
  await Promise.all([sse.stop(), json.stop()]);
  if (problems.length > 0) throw new Error(`mcp: ${problems.join('; ')}`);
}

runMain('mcp', () => main(settings()), { budgetMs: BUDGET_MS });
