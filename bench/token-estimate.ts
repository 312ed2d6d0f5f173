/**
 * Token-estimate benchmark: what the LLM route's input-token upper bound costs per request
 * (estimateInputTokens of dist/: UTF-8 bytes of the text, JSON bytes of the rest, fixed
 * overheads) against counting exactly with an o200k tokenizer (gpt-tokenizer's chat encoding
 * for gpt-4o, the count gpt-4o and later bill), and how far above that count the bound is.
 *
 * Usage (from the repository root):
 *   npm run bench -- token-estimate [--rounds N] [--time MS] [--quick]
 *
 * Options:
 *   --rounds N   alternated rounds (default 6, at least 3); the candidates' order rotates each round
 *   --time MS    measured time per candidate, text and round, after a short warm-up (default 150)
 *   --quick      3 rounds of 40 ms of the 1 KB and 10 KB requests: a few seconds, for CI (nothing
 *                written)
 *
 * Requests: a short system message and one user message of 1 KB, 10 KB or 100 KB of UTF-8 of
 * each corpus (bench/token-estimate/corpora.ts: English prose, TypeScript, CJK). One tinybench
 * iteration of the byte bound is about 100 KB of text (100, 10 or 1 requests), so that timing
 * an iteration costs next to nothing; of the tokenizer, one request (70 µs at the least).
 * Candidates:
 *   - byte bound: estimateInputTokens, the baseline;
 *   - o200k, warm: gpt-tokenizer's encodeChat, its merge cache warm from the same text (the
 *     best case: a service sees new text);
 *   - o200k, cold: the same with the merge cache cleared before each request (the worst case).
 *
 * Figures: µs per request (median over the rounds, min-max) and per round the ratio to the byte
 * bound; the bound's looseness as estimate / exact o200k count, and UTF-8 bytes per o200k token
 * of the text alone; the tokenizer's load cost (time to load and count once, heap kept) from a
 * child process (bench/token-estimate/load-cost.ts). Check: the estimate is at least the exact
 * count for every request (exit 1 otherwise).
 *
 * Prints tables and writes bench/results/token-estimate.json. Bounded: 90 s at most (about
 * 40 s by default).
 */
import { resolve } from 'node:path';
import { clearMergeCache, encodeChat } from 'gpt-tokenizer';
import type { ChatRequest } from '../src/llm/chat.types';
import { built } from './support/built';
import { microBench } from './support/micro-bench';
import { option } from './support/options';
import { runForResult, runMain } from './support/processes';
import { fixed, printTable, range, writeResults } from './support/report';
import { pairedRatio, summary } from './support/stats';
import { corpus, CORPORA, type CorpusName } from './token-estimate/corpora';
import { LOAD_COST_NODE_ARGS, type LoadCost } from './token-estimate/load-cost';

const { estimateInputTokens } = built<typeof import('../src/llm/pricing')>('llm/pricing');

const BUDGET_MS = 90_000;
const SIZES = [
  { label: '1 KB', bytes: 1_024, perIteration: 100 },
  { label: '10 KB', bytes: 10_240, perIteration: 10 },
  { label: '100 KB', bytes: 102_400, perIteration: 1 },
] as const;

const BOUND = 'byte bound';
const WARM = 'o200k, warm';
const COLD = 'o200k, cold';
const CANDIDATES = [BOUND, WARM, COLD] as const;
type Candidate = (typeof CANDIDATES)[number];

interface Case {
  corpus: CorpusName;
  size: (typeof SIZES)[number];
  request: ChatRequest;
  messages: { role: 'system' | 'user'; content: string }[];
}

const exactCount = (c: Case) => encodeChat(c.messages, 'gpt-4o').length;

const COUNTERS: Record<Candidate, (c: Case) => number> = {
  [BOUND]: (c) => estimateInputTokens(c.request),
  [WARM]: exactCount,
  [COLD]: (c) => {
    clearMergeCache();
    return exactCount(c);
  },
};

function cases(): Case[] {
  return CORPORA.flatMap((name) =>
    SIZES.map((size) => {
      const messages = [
        { role: 'system' as const, content: 'You answer in one short paragraph.' },
        { role: 'user' as const, content: corpus(name, size.bytes) },
      ];
      return { corpus: name, size, messages, request: { model: 'gpt-4o', messages } };
    }),
  );
}

const caseName = (c: Case) => `${c.corpus} ${c.size.label}`;
const requestsPerIteration = (c: Case, candidate: Candidate) => (candidate === BOUND ? c.size.perIteration : 1);

/** µs per request of every candidate on every case, one value per round. */
async function measureTime(all: Case[], rounds: number, timeMs: number): Promise<Map<string, number[]>> {
  const usPerRequest = new Map<string, number[]>();
  for (let round = 0; round < rounds; round++) {
    // Rotating the order spreads drift (thermal, a neighbour's load, GC debt) over everyone.
    const order = CANDIDATES.map((_, i) => CANDIDATES[(i + round) % CANDIDATES.length]!);
    for (const c of all) {
      const bench = microBench(timeMs);
      for (const candidate of order) {
        const count = COUNTERS[candidate];
        const repeat = requestsPerIteration(c, candidate);
        bench.add(candidate, () => {
          for (let i = 0; i < repeat; i++) count(c);
        });
      }
      await bench.run();
      for (const task of bench.tasks) {
        const result = task.result;
        if (result.state !== 'completed') throw new Error(`${task.name} (${caseName(c)}): ${result.state}`);
        const key = `${caseName(c)}|${task.name}`;
        const perRequest = (result.period * 1e3) / requestsPerIteration(c, task.name as Candidate);
        usPerRequest.set(key, [...(usPerRequest.get(key) ?? []), perRequest]);
      }
    }
    process.stdout.write(`  round ${round + 1}/${rounds} done\n`);
  }
  return usPerRequest;
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const rounds = option('rounds', quick ? 3 : 6, 3);
  const timeMs = option('time', quick ? 40 : 150, 10);
  process.stdout.write(
    `token-estimate: ${rounds} alternated rounds of ${timeMs} ms per candidate and text; node ${process.version}\n`,
  );
  const all = cases();

  const loose = all.map((c) => {
    const exact = exactCount(c);
    const estimate = estimateInputTokens(c.request);
    const text = c.messages[1]!.content;
    return {
      c,
      exact,
      estimate,
      bytesPerToken: Buffer.byteLength(text) / encodeChat([c.messages[1]!], 'gpt-4o').length,
    };
  });
  const looseRows = loose.map(({ c, exact, estimate, bytesPerToken }) => ({
    text: caseName(c),
    'o200k tokens': exact,
    estimate,
    'estimate / o200k': fixed(estimate / exact),
    'UTF-8 bytes / o200k token': fixed(bytesPerToken),
  }));
  printTable('looseness: the estimate against the exact o200k count of the same request', looseRows);
  const under = loose.filter(({ exact, estimate }) => estimate < exact);
  if (under.length > 0) process.exitCode = 1;

  // A 100 KB request takes the tokenizer up to 50 ms: tinybench's minimum of iterations alone
  // would make a quick run last long.
  const timed = quick ? all.filter((c) => c.size.bytes <= 10_240) : all;
  const time = await measureTime(timed, rounds, timeMs);
  const series = (c: Case, candidate: Candidate) => time.get(`${caseName(c)}|${candidate}`)!;
  const timeRows = timed.flatMap((c) =>
    CANDIDATES.map((candidate) => ({
      text: caseName(c),
      candidate,
      'µs/request': range(summary(series(c, candidate)), 1),
      [`× ${BOUND}`]: candidate === BOUND ? '' : range(pairedRatio(series(c, BOUND), series(c, candidate)), 0),
    })),
  );
  printTable(`time per request: median (min-max) over ${rounds} rounds; ratios per round`, timeRows);

  const load = await runForResult<LoadCost>(
    'load-cost child',
    resolve(__dirname, 'token-estimate/load-cost.ts'),
    [],
    LOAD_COST_NODE_ARGS,
  );
  process.stdout.write(
    `\ngpt-tokenizer (o200k) load and first count: ${fixed(load.loadAndFirstCountMs, 0)} ms, ` +
      `heap kept: ${fixed(load.retainedHeapBytes / 2 ** 20, 1)} MiB; the byte bound loads nothing\n`,
  );
  process.stdout.write(
    `the estimate is at least the exact o200k count for every request: ${under.length === 0 ? 'yes' : `NO (${under.map(({ c }) => caseName(c)).join(', ')})`}\n`,
  );

  if (quick) {
    process.stdout.write('quick mode: results not written\n');
    return;
  }
  const file = writeResults('token-estimate', {
    settings: { rounds, timeMsPerCandidate: timeMs, sizes: SIZES },
    usPerRequest: Object.fromEntries(time),
    looseness: looseRows,
    time: timeRows,
    tokenizerLoad: load,
    estimateNeverUnder: under.length === 0,
  });
  process.stdout.write(`wrote ${file}\n`);
}

runMain('token-estimate', main, { budgetMs: BUDGET_MS });
