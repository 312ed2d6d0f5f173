/**
 * The added latency of one request at a time, the independent gateway benchmarks' method: one
 * keep-alive connection per side, each request sent when the previous answer was read whole,
 * in alternated rounds; a side's added latency is its percentile less direct's in the same round.
 * Every answer is checked as the throughput runs check theirs.
 */
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { printTable, range, type Stat } from '../support/report';
import { median, percentile } from '../support/stats';
import type { Endpoint } from './sides';
import { baselineOf, isBaseline, type Side } from './summary';

/**
 * The sides the sequential rounds time: the least proxy in Node (floor), the LLM route through
 * each ingress, and an http tool.
 */
export const SEQUENTIAL_SIDES: readonly Side[] = [
  'direct',
  'floor',
  'service',
  'messages',
  'responses',
  'tool',
  'embed-direct',
  'embeddings',
];

export interface SequentialRun {
  round: number;
  side: Side;
  p50Ms: number;
  p99Ms: number;
  /** Answers that were not 200 with every expected part. */
  wrong: number;
}

/** `count` requests to `endpoint`, one after another on one connection: each one's time, in ms. */
export async function timeSequential(endpoint: Endpoint, count: number): Promise<{ times: number[]; wrong: number }> {
  const url = new URL(endpoint.url);
  const pool = new Pool(url.origin, { connections: 1, pipelining: 1 });
  const times: number[] = [];
  let wrong = 0;
  try {
    for (let index = 0; index < count; index++) {
      const started = performance.now();
      const answer = await pool.request({
        method: 'POST',
        path: url.pathname,
        headers: endpoint.headers,
        body: endpoint.body,
      });
      const text = await answer.body.text();
      times.push(performance.now() - started);
      if (answer.statusCode !== 200 || !endpoint.expect.every((part) => text.includes(part))) wrong++;
    }
  } finally {
    await pool.close();
  }
  return { times, wrong };
}

/** One side's run of a round: its p50 and p99. */
export async function sequentialRun(
  side: Side,
  endpoint: Endpoint,
  round: number,
  count: number,
): Promise<SequentialRun> {
  const { times, wrong } = await timeSequential(endpoint, count);
  const sorted = times.sort((a, b) => a - b);
  return { round, side, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), wrong };
}

export interface AddedLatency {
  side: Side;
  /** Per round, this side's percentile less its baseline's (`baselineOf`): median, min and max over the rounds. */
  p50: Stat;
  p99: Stat;
}

/** Each side's added latency over its baseline (direct; embeddings: embed-direct), round by round. */
export function addedLatencies(runs: readonly SequentialRun[], sides: readonly Side[]): AddedLatency[] {
  const byRound = (side: Side) => new Map(runs.filter((run) => run.side === side).map((run) => [run.round, run]));
  return sides
    .filter((side) => !isBaseline(side))
    .map((side) => {
      const base = byRound(baselineOf(side));
      const mine = runs.filter((run) => run.side === side && base.has(run.round));
      const spread = (of: (run: SequentialRun) => number): Stat => {
        const added = mine.map((run) => of(run) - of(base.get(run.round)!));
        return { median: median(added), min: Math.min(...added), max: Math.max(...added) };
      };
      return { side, p50: spread((run) => run.p50Ms), p99: spread((run) => run.p99Ms) };
    });
}

export function printAddedLatencies(added: readonly AddedLatency[], count: number, rounds: number): void {
  printTable(
    `added latency, one request at a time (${rounds} alternated rounds of ${count} per side), ms over direct (embeddings: over embed-direct), median (min-max) of the rounds`,
    added.map(({ side, p50, p99 }) => ({ side, 'p50 added': range(p50, 3), 'p99 added': range(p99, 3) })),
  );
}
