import fc from 'fast-check';
import { deeplyNested, hostileJsonText, hostileWithin } from '../../../test/support/hostile-json';
import { carriesContent, StreamAssembly } from '../streaming/stream-assembly';
import { MAX_CHOICES, MAX_TOOL_CALLS } from '../wire';
import type { ProviderTarget } from './llm-provider';
import { readOpenAiAnswer } from './openai-answer';
import { readOpenAiChunk } from './openai-chunk';
import { isProviderFailure } from './provider-errors';

/**
 * The OpenAI wire's readers against whatever an upstream may send: each answer is read, or is the
 * attempt's typed failure, and what is read the route can use without throwing, sized by nothing
 * the upstream numbered.
 */
const TARGET: ProviderTarget = { provider: 'openai', model: 'gpt-test' };
const NOW_MS = 1_767_225_600_000;

const CHUNK_SHAPES = [
  '{"choices":[{"index":"$","delta":{"content":"$","tool_calls":[{"index":"$","id":"$","function":{"name":"$","arguments":"$"}}]},"finish_reason":"$"}],"usage":"$"}',
  '{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":"$","refusal":"$"}}]}',
  '{"choices":[{"index":0,"delta":{"tool_calls":"$"}}]}',
  '{"choices":"$","usage":{"prompt_tokens":"$","completion_tokens":"$","prompt_tokens_details":"$"}}',
  '{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":"$"}}',
];
const chunkText = fc.oneof(hostileJsonText, ...CHUNK_SHAPES.map(hostileWithin));

/** Reads `text` as a chunk: the chunk, or undefined for the attempt's typed failure; any other throw fails. */
function readOrFail(text: string) {
  try {
    return readOpenAiChunk(TARGET, text, NOW_MS).chunk;
  } catch (error) {
    if (isProviderFailure(error)) return undefined;
    throw error;
  }
}

describe('the OpenAI wire readers, fuzzed', () => {
  it('read any stream of events into an answer the route can use, or fail the attempt', () => {
    fc.assert(
      fc.property(fc.array(chunkText, { maxLength: 8 }), (texts) => {
        const assembly = new StreamAssembly();
        for (const text of texts) {
          const chunk = readOrFail(text);
          if (chunk === undefined) return;
          carriesContent(chunk);
          assembly.add(chunk);
        }
        const completion = assembly.completion(10);
        expect(completion.choices.length).toBeLessThanOrEqual(MAX_CHOICES);
        for (const { message } of completion.choices) {
          expect(message.content === null || typeof message.content === 'string').toBe(true);
          expect((message.tool_calls ?? []).length).toBeLessThanOrEqual(MAX_TOOL_CALLS);
          for (const call of message.tool_calls ?? []) expect(typeof call.function.arguments).toBe('string');
        }
        const usage = assembly.usage(10);
        // Numbers, whatever they say: the account bounds them (src/llm/ingress-answers.property.spec.ts).
        expect(typeof usage.prompt_tokens).toBe('number');
        expect(typeof usage.completion_tokens).toBe('number');
      }),
      { numRuns: 2000 },
    );
  });

  it('read any whole answer as a completion with choices, messages and usage, or fail the attempt', () => {
    const shapes = [
      '{"id":"$","choices":[{"index":"$","message":{"content":"$","tool_calls":"$","refusal":"$"},"finish_reason":"$"}],"usage":{"prompt_tokens":"$","completion_tokens":"$"}}',
      '{"id":"x","choices":"$","usage":"$"}',
    ];
    fc.assert(
      fc.property(fc.oneof(hostileJsonText, ...shapes.map(hostileWithin)), (text) => {
        let completion;
        try {
          completion = readOpenAiAnswer(TARGET, JSON.parse(text), NOW_MS);
        } catch (error) {
          if (isProviderFailure(error)) return;
          throw error;
        }
        expect(completion.choices.length).toBeGreaterThan(0);
        for (const choice of completion.choices) expect(typeof choice.message).toBe('object');
        expect(typeof completion.usage.total_tokens).toBe('number');
      }),
      { numRuns: 2000 },
    );
  });

  it('fail the attempt for an index past any answer, allocating nothing by it', () => {
    for (const index of [MAX_TOOL_CALLS, 300_000_000, 2 ** 32, 1e308, -1, 0.5]) {
      const text = JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: [{ index, id: 'c' }] } }] });
      expect(readOrFail(text)).toBeUndefined();
    }
    expect(readOrFail(JSON.stringify({ choices: [{ index: MAX_CHOICES, delta: {} }] }))).toBeUndefined();
  });

  it('keeps prototype keys as keys', () => {
    const chunk = readOrFail('{"choices":[{"index":0,"delta":{"__proto__":{"content":"x"},"content":"y"}}]}');
    const assembly = new StreamAssembly();
    assembly.add(chunk!);
    expect(assembly.completion(1).choices[0].message.content).toBe('y');
    expect(({} as Record<string, unknown>).content).toBeUndefined();
  });

  it('fail the attempt, without throwing past the reader, for deeply nested values', () => {
    for (const kind of ['array', 'object'] as const) {
      expect(readOrFail(deeplyNested(100_000, kind))).toBeUndefined();
      expect(readOrFail(`{"choices":[{"index":0,"delta":{"content":${deeplyNested(10_000, kind)}}}]}`)).toBeUndefined();
    }
  });
});
