/**
 * Wire-checks benchmark: what checking every chunk of a model server's stream against its wire's
 * shape costs (issue 35: validation must not cost more than 5 % of a stream's service CPU). The
 * readers of dist/, in process: an OpenAI chunk as the streaming benchmark's model server sends
 * it, read with `JSON.parse` alone and with the reader (`readOpenAiChunk`: parse, the compiled
 * check, the fields filled in); an Anthropic `content_block_delta` event parsed alone and parsed
 * then checked (`isAnthropicStreamEvent`).
 *
 * Usage (from the repository root):
 *   npm run bench -- wire-checks [--rounds N] [--time MS] [--quick]
 *
 * Options:
 *   --rounds N   alternated rounds (default 6, at least 3); the candidates' order rotates each round
 *   --time MS    measured time per candidate and round (default 200)
 *   --quick      3 rounds of 40 ms: does it still run? (nothing written)
 *
 * Figures: ns per chunk of each candidate (median over the rounds, min-max) and, per round, the
 * check's own cost (reader - parse alone). Against the service CPU per stream the streaming
 * benchmark measured last (bench/results/llm-streaming.json, 16 streams at a time, 203 chunks
 * each), the check's share of a stream's service CPU. Prints tables and writes
 * bench/results/wire-checks.json. Bounded: 60 s at most (about 15 s by default).
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { built } from './support/built';
import { microBench } from './support/micro-bench';
import { option } from './support/options';
import { ROOT, runMain } from './support/processes';
import { fixed, printTable, range, writeResultsUnlessQuick } from './support/report';
import { pairedRatio, summary } from './support/stats';

const { readOpenAiChunk } = built<typeof import('../src/llm/providers/openai-chunk')>('llm/providers/openai-chunk');
const { isAnthropicStreamEvent } = built<typeof import('../src/llm/wire')>('llm/wire');

const BUDGET_MS = 60_000;
/** Chunks of one of the streaming benchmark's answers: the role, 200 pieces, the finish, the usage. */
const CHUNKS_PER_STREAM = 203;
/** Chunks per tinybench iteration: timing one costs next to nothing beside them. */
const PER_ITERATION = 100;

const TARGET = { provider: 'openai', model: 'gpt-4o-mini' };
const OPENAI_CHUNK = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion.chunk',
  created: 1_767_225_600,
  model: 'gpt-4o-mini-2024-07-18',
  system_fingerprint: 'fp_bench',
  choices: [{ index: 0, delta: { content: 'piece 17 of the answer ' }, logprobs: null, finish_reason: null }],
});
const ANTHROPIC_EVENT = JSON.stringify({
  type: 'content_block_delta',
  index: 0,
  delta: { type: 'text_delta', text: 'piece 17 of the answer ' },
});

const CANDIDATES: Record<string, () => unknown> = {
  'OpenAI chunk, JSON.parse alone': () => JSON.parse(OPENAI_CHUNK),
  'OpenAI chunk, readOpenAiChunk': () => readOpenAiChunk(TARGET, OPENAI_CHUNK, 0),
  'Anthropic event, JSON.parse alone': () => JSON.parse(ANTHROPIC_EVENT),
  'Anthropic event, parsed and checked': () => {
    if (!isAnthropicStreamEvent(JSON.parse(ANTHROPIC_EVENT))) throw new Error('the event must be well formed');
  },
};
const PAIRS = [
  ['OpenAI chunk', 'OpenAI chunk, JSON.parse alone', 'OpenAI chunk, readOpenAiChunk'],
  ['Anthropic event', 'Anthropic event, JSON.parse alone', 'Anthropic event, parsed and checked'],
] as const;

/** ns per chunk of every candidate, one value per round. */
async function measure(rounds: number, timeMs: number): Promise<Map<string, number[]>> {
  const names = Object.keys(CANDIDATES);
  const nsPerChunk = new Map<string, number[]>();
  for (let round = 0; round < rounds; round++) {
    const bench = microBench(timeMs);
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + round) % names.length]!;
      const run = CANDIDATES[name]!;
      bench.add(name, () => {
        for (let n = 0; n < PER_ITERATION; n++) run();
      });
    }
    await bench.run();
    for (const task of bench.tasks) {
      if (task.result.state !== 'completed') throw new Error(`${task.name}: ${task.result.state}`);
      const ns = (task.result.period * 1e6) / PER_ITERATION;
      nsPerChunk.set(task.name, [...(nsPerChunk.get(task.name) ?? []), ns]);
    }
  }
  return nsPerChunk;
}

interface StreamingResults {
  results?: { summary?: Array<{ scenario: string; sides: Array<{ side: string; serviceCpuUsPerStream: number }> }> };
}

/** The service CPU per stream, 16 at a time, of the streaming benchmark's last results, if any. */
function serviceCpuUsPerStream(): number | undefined {
  const file = resolve(ROOT, 'bench/results/llm-streaming.json');
  if (!existsSync(file)) return undefined;
  const { results } = JSON.parse(readFileSync(file, 'utf8')) as StreamingResults;
  const scenario = results?.summary?.find((entry) => entry.scenario === 'immediate, 16 at a time');
  return scenario?.sides.find((entry) => entry.side === 'service')?.serviceCpuUsPerStream;
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const rounds = option('rounds', quick ? 3 : 6, 3);
  const timeMs = option('time', quick ? 40 : 200, 10);
  process.stdout.write(
    `wire-checks: ${rounds} alternated rounds of ${timeMs} ms per candidate; node ${process.version}\n`,
  );
  const ns = await measure(rounds, timeMs);
  printTable(
    `ns per chunk: median (min-max) over ${rounds} rounds`,
    Object.keys(CANDIDATES).map((name) => ({ candidate: name, 'ns/chunk': range(summary(ns.get(name)!), 0) })),
  );
  const serviceUs = serviceCpuUsPerStream();
  const rows = PAIRS.map(([label, alone, checked]) => {
    const added = ns.get(checked)!.map((value, round) => value - ns.get(alone)![round]!);
    const perStreamUs = (summary(added).median * CHUNKS_PER_STREAM) / 1000;
    return {
      wire: label,
      'check ns/chunk (reader - parse)': range(summary(added), 0),
      'reader / parse': range(pairedRatio(ns.get(alone)!, ns.get(checked)!), 2),
      'µs per stream of 203 chunks': fixed(perStreamUs, 1),
      'share of service CPU/stream': serviceUs === undefined ? 'n/a' : `${fixed((100 * perStreamUs) / serviceUs, 2)} %`,
    };
  });
  printTable(
    `the check's cost${serviceUs === undefined ? '' : `, against ${fixed(serviceUs, 0)} µs of service CPU per stream (llm-streaming, 16 at a time)`}`,
    rows,
  );
  writeResultsUnlessQuick('wire-checks', quick, {
    settings: { rounds, timeMs, chunksPerStream: CHUNKS_PER_STREAM },
    nsPerChunk: Object.fromEntries(ns),
    serviceCpuUsPerStream: serviceUs ?? null,
    checks: rows,
  });
}

runMain('wire-checks', main, { budgetMs: BUDGET_MS });
