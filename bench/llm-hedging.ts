/**
 * LLM hedging benchmark, the tail-at-scale experiment: how much lower is the LLM route's tail
 * latency when it hedges (`hedgeAfterMs`: a second request to the same target once the first has
 * not answered after that long, the first answer wins, the other is cancelled), and for how many
 * more requests at the upstream?
 *
 *   npm run bench -- llm-hedging [options]
 *
 * Options:
 *   --requests N   measured requests of each run (default 2000, at least 100)
 *   --clients N    closed-loop clients (default 16)
 *   --seed N       the upstream's random seed (default 13)
 *   --hedge-after-ms N
 *                  hedge after N ms instead of the unhedged run's p95 (on a machine busy with other
 *                  work, that p95 holds the noise too: see BENCHMARKS.md)
 *   --quick        200 requests from 8 clients, no warm-up: does it still run? (no results written)
 *
 * Processes, all on loopback: a model server with a heavy tail (bench/llm-hedging/tail-upstream.ts:
 * OpenAI's Chat Completions, non-streamed; 96 % of answers in 18-22 ms, 4 % twenty times slower,
 * 360-440 ms, drawn from a seeded random in the order requests arrive), the service (`node
 * dist/main.js`, one API-key tenant in the normal pool, the route `chat` with one `openai` target
 * at the server, cache off, in a lane and a pool too big to limit; a service of its own for each
 * run), and this one, the clients (undici, a keep-alive connection each).
 *
 * Two runs of the same closed-loop load, each from the upstream's random seeded afresh: each
 * client sends its next request when its last was answered, every request a question of its own,
 * until the run's requests were sent.
 *   unhedged  the route with `hedgeAfterMs: 0`;
 *   hedged    the route hedging after the unhedged run's p95, rounded up to a whole ms (at most
 *             one hedge a request; the service's own cap: 10 % of the route's requests after a
 *             burst of 2).
 * Each run has a service of its own, checked with one request and warmed up with 200 (a tenth of
 * the requests, not measured) before the upstream is reseeded and the run measured.
 *
 * Figures: p50, p95, p99 and max of the client-observed time of every answer; requests the upstream
 * received per client request less one (what hedging cost it); hedges won and lost (the service's
 * `bulkhead_llm_hedges_total`); p99 unhedged / hedged; whether the target (p99 at least 5×
 * lower for at most 10 % more requests) was met. Prints tables and writes
 * bench/results/llm-hedging.json. Exits 1 if a check fails: an answer that was not 200 with the
 * upstream's text and an `x-bulkhead-hedged` header; the upstream's requests fewer than the
 * answers, or more than the answers plus the hedges; an attempt that ended otherwise than `ok` or
 * `hedge_lost`; hedges won not the answers marked hedged; a hedge with hedging off, or none with it
 * on; more hedges than the 10 % cap; a call left in the lane or at the upstream; or a process still
 * running at the end. The target is reported, not checked. About 15 s; bounded at 90 s. `--quick`
 * takes about 8 s.
 */
import { loadavg } from 'node:os';
import { stopAll } from './llm-proxy/checks';
import { checkRun } from './llm-hedging/checks';
import { measureRun, type MeasuredRun, type RunSettings } from './llm-hedging/measure-run';
import { compareRuns, printRuns, summariseRun } from './llm-hedging/summary';
import { startTailUpstream, TAIL } from './llm-hedging/tail-upstream';
import { chatRunSettings } from './llm-hedging/closed-loop';
import { option } from './support/options';
import { runMain } from './support/processes';
import { writeResultsUnlessQuick } from './support/report';
import { percentile } from './support/stats';
import { apiKey } from './support/service';

const BUDGET_MS = 90_000;

type Settings = RunSettings & { quick: boolean; hedgeAfterMs: number | undefined };

function settings(): Settings {
  return {
    ...chatRunSettings(13),
    hedgeAfterMs: process.argv.includes('--hedge-after-ms') ? option('hedge-after-ms', 0, 1) : undefined,
  };
}

async function main(s: Settings): Promise<void> {
  const loadAverageAtStart = loadavg();
  const key = apiKey('agent');
  const upstream = await startTailUpstream();
  process.stdout.write(
    `llm-hedging: ${s.requests} requests from ${s.clients} closed-loop clients per run; upstream ` +
      `${100 * (1 - TAIL.slowShare)} % ~${TAIL.fastMs} ms, ${100 * TAIL.slowShare} % ~${TAIL.slowMs} ms ` +
      `(±${100 * TAIL.spread} %), seed ${s.seed}\nnode ${process.version}, load average ${loadAverageAtStart
        .map((load) => load.toFixed(2))
        .join(' ')}\n`,
  );

  const runs: MeasuredRun[] = [];
  const unhedged = await measureRun('unhedged', 0, upstream, key, s);
  runs.push(unhedged);
  const p95Ms = percentile(unhedged.latenciesMs, 95);
  const hedgeAfterMs = s.hedgeAfterMs ?? Math.ceil(p95Ms);
  process.stdout.write(
    `unhedged run: p95 ${p95Ms.toFixed(1)} ms; the hedged run hedges after ${hedgeAfterMs} ms` +
      `${s.hedgeAfterMs === undefined ? '' : ' (--hedge-after-ms)'}\n`,
  );
  // A p95 that is not a number (no good answer) leaves nothing to hedge after; the checks say why.
  if (Number.isFinite(hedgeAfterMs) && hedgeAfterMs > 0) {
    runs.push(await measureRun('hedged', hedgeAfterMs, upstream, key, s));
  }

  const problems = runs.flatMap((run) => checkRun(run, s.requests));
  if (runs.length < 2) problems.push('the unhedged run had no p95 to hedge after: the hedged run did not run');
  problems.push(...(await stopAll([upstream.child])));

  const summaries = runs.map(summariseRun);
  const comparison = summaries.length === 2 ? compareRuns(summaries[0]!, summaries[1]!) : undefined;
  printRuns(summaries, comparison);
  process.stdout.write(`\nchecks: ${problems.length === 0 ? 'all passed' : problems.join('; ')}\n`);

  writeResultsUnlessQuick('llm-hedging', s.quick, {
    settings: { ...s, tail: TAIL, loadAverageAtStart, loadAverageAtEnd: loadavg() },
    summary: summaries,
    comparison,
    checks: { problems },
    runs: runs.map(({ latenciesMs: _latencies, ...run }) => run),
  });
  if (problems.length > 0) process.exitCode = 1;
}

runMain('llm-hedging', () => main(settings()), { budgetMs: BUDGET_MS });
