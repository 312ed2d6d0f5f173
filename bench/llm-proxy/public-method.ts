/**
 * The public gateway-overhead benchmark's method (github.com/cuihuan/llm-gateway-bench,
 * `probe/overhead.mjs`), restated: the gateway started fresh for each run, the global `fetch` as
 * the client, 15 warm-up calls, then 7 rounds of 25 sequential calls, direct then through the
 * gateway; a run's figure is the median over its rounds of (the gateway's round median − direct's
 * round median). The figures people quote (Bifrost +0.44 ms, Portkey +2.37, LiteLLM +4.34) are
 * this method's, so it is how a user will measure Bulkhead: cold, and with `fetch`.
 */
import { performance } from 'node:perf_hooks';
import { printTable } from '../support/report';
import type { Endpoint } from './sides';

export const PUBLIC_WARM_UP_CALLS = 15;
export const PUBLIC_ROUNDS = 7;
export const PUBLIC_ROUND_CALLS = 25;

/** One run of the method on one freshly started gateway. */
export interface PublicMethodRun {
  side: string;
  run: number;
  /** The run's figure: the median over rounds of the rounds' added medians. */
  addedMs: number;
  /** Each round's added median, in order: how the figure moved as the process warmed. */
  rounds: number[];
  /** Answers that were not 200 with every expected part. */
  wrong: number;
}

/** A gateway started for one run: its endpoint, and how to stop it. */
export interface FreshGateway {
  endpoint: Endpoint;
  stop(): Promise<void>;
}

/** `count` calls with the global `fetch`, one after another: each one's time in ms. */
async function timeWithFetch(endpoint: Endpoint, count: number): Promise<{ times: number[]; wrong: number }> {
  const times: number[] = [];
  let wrong = 0;
  for (let index = 0; index < count; index++) {
    const started = performance.now();
    const answer = await fetch(endpoint.url, { method: 'POST', headers: endpoint.headers, body: endpoint.body });
    const text = await answer.text();
    times.push(performance.now() - started);
    if (answer.status !== 200 || !endpoint.expect.every((part) => text.includes(part))) wrong++;
  }
  return { times, wrong };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** One run: a gateway started now, warmed by 15 calls, measured over 7 rounds beside direct. */
export async function publicMethodRun(
  side: string,
  run: number,
  direct: Endpoint,
  start: () => Promise<FreshGateway>,
): Promise<PublicMethodRun> {
  const gateway = await start();
  try {
    let { wrong } = await timeWithFetch(gateway.endpoint, PUBLIC_WARM_UP_CALLS);
    await timeWithFetch(direct, PUBLIC_WARM_UP_CALLS);
    const rounds: number[] = [];
    for (let round = 0; round < PUBLIC_ROUNDS; round++) {
      const baseline = await timeWithFetch(direct, PUBLIC_ROUND_CALLS);
      const measured = await timeWithFetch(gateway.endpoint, PUBLIC_ROUND_CALLS);
      wrong += measured.wrong;
      rounds.push(median(measured.times) - median(baseline.times));
    }
    return { side, run, addedMs: median(rounds), rounds, wrong };
  } finally {
    await gateway.stop();
  }
}

/** Each side's runs, alternated (one run of each side in turn): the machine's drift falls on all alike. */
export async function publicMethodRuns(
  sides: ReadonlyArray<{ side: string; start: () => Promise<FreshGateway> }>,
  direct: Endpoint,
  runs: number,
): Promise<PublicMethodRun[]> {
  const results: PublicMethodRun[] = [];
  for (let run = 1; run <= runs; run++) {
    for (const { side, start } of sides) results.push(await publicMethodRun(side, run, direct, start));
  }
  return results;
}

/** Each side's figures, run by run, and the median of its runs; Bulkhead over each other side. */
export function printPublicMethod(results: readonly PublicMethodRun[]): void {
  const sides = [...new Set(results.map((result) => result.side))];
  printTable(
    `the public method (fresh process, fetch, ${PUBLIC_WARM_UP_CALLS} warm-up calls, ` +
      `${PUBLIC_ROUNDS} rounds of ${PUBLIC_ROUND_CALLS}): added ms, median over rounds`,
    sides.map((side) => {
      const own = results.filter((result) => result.side === side);
      return {
        side,
        runs: own.map((result) => result.addedMs.toFixed(2)).join(', '),
        'median of runs': median(own.map((result) => result.addedMs)).toFixed(2),
        'rounds of the first run': own[0].rounds.map((added) => added.toFixed(2)).join(' '),
      };
    }),
  );
  const wrong = results.reduce((sum, result) => sum + result.wrong, 0);
  if (wrong > 0) console.log(`  ${wrong} answers were wrong`);
}
