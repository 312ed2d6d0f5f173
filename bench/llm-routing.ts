/**
 * LLM routing benchmark: two deployments of one model, one three times slower, behind one route;
 * how do the strategies that choose between them compare? `ordered` (the fast one first, the
 * other a spare: what a route did before strategies), `least-busy` (fewest attempts in flight)
 * and `lowest-latency` (lowest recent average answer time).
 *
 *   npm run bench -- llm-routing [options]
 *
 * Options:
 *   --requests N   measured requests of each run (default 2000, at least 100)
 *   --clients N    closed-loop clients (default 16)
 *   --seed N       the upstream's random seed (default 17)
 *   --quick        200 requests from 8 clients, no warm-up: does it still run? (no results written)
 *
 * Processes, all on loopback: the two deployments (bench/llm-routing/deployments-upstream.ts:
 * OpenAI's Chat Completions, non-streamed; each works on 4 requests at once and queues the rest,
 * 20 ms a request for the fast one and 60 ms for the slow one, ±10 %), the service (`node
 * dist/main.js`, one API-key tenant, the route `chat` with both deployments as targets, no
 * hedging, no cache; a service of its own for each run), and this one, the clients (undici, a
 * keep-alive connection each, each sending its next request when its last was answered).
 *
 * Figures per strategy: p50, p95, p99 and max of the client-observed time of every answer;
 * requests per second; each deployment's share of the requests and the most it held at once.
 * Prints a table and writes bench/results/llm-routing.json. Exits 1 if a check fails: an answer
 * that was not 200 with the upstream's text; the deployments' requests not one per answer; a
 * call left at the upstream; `ordered` sending anything to the spare, or `least-busy` leaving a
 * deployment idle; or a process still running at the end. About 20 s; bounded at 120 s.
 * `--quick` takes about 10 s.
 */
import { loadavg } from 'node:os';
import { stopAll } from './llm-proxy/checks';
import { DEPLOYMENTS, startDeploymentsUpstream } from './llm-routing/deployments-upstream';
import { measureRun, type MeasuredRun, type RunSettings, type Strategy } from './llm-routing/measure-run';
import { checkRun, printRuns, summariseRun } from './llm-routing/summary';
import { chatRunSettings } from './llm-hedging/closed-loop';
import { runMain } from './support/processes';
import { writeResultsUnlessQuick } from './support/report';
import { apiKey } from './support/service';

const BUDGET_MS = 120_000;
const STRATEGIES: readonly Strategy[] = ['ordered', 'least-busy', 'lowest-latency'];

type Settings = RunSettings & { quick: boolean };

function settings(): Settings {
  return chatRunSettings(17);
}

async function main(s: Settings): Promise<void> {
  const loadAverageAtStart = loadavg();
  const key = apiKey('agent');
  const upstream = await startDeploymentsUpstream();
  const slowMs = DEPLOYMENTS.fastMs * DEPLOYMENTS.slowFactor;
  process.stdout.write(
    `llm-routing: ${s.requests} requests from ${s.clients} closed-loop clients per strategy; deployments ` +
      `fast ~${DEPLOYMENTS.fastMs} ms and slow ~${slowMs} ms a request, ${DEPLOYMENTS.slots} at once each, seed ` +
      `${s.seed}\nnode ${process.version}, load average ${loadAverageAtStart.map((load) => load.toFixed(2)).join(' ')}\n`,
  );

  const runs: MeasuredRun[] = [];
  for (const strategy of STRATEGIES) runs.push(await measureRun(strategy, upstream, key, s));

  const problems = runs.flatMap((run) => checkRun(run, s.requests));
  problems.push(...(await stopAll([upstream.child])));
  const summaries = runs.map(summariseRun);
  printRuns(summaries);
  process.stdout.write(`\nchecks: ${problems.length === 0 ? 'all passed' : problems.join('; ')}\n`);

  writeResultsUnlessQuick('llm-routing', s.quick, {
    settings: { ...s, deployments: DEPLOYMENTS, loadAverageAtStart, loadAverageAtEnd: loadavg() },
    summary: summaries,
    checks: { problems },
    runs: runs.map(({ latenciesMs: _latencies, ...run }) => run),
  });
  if (problems.length > 0) process.exitCode = 1;
}

runMain('llm-routing', () => main(settings()), { budgetMs: BUDGET_MS });
