import fc from 'fast-check';
import { deeplyNested, hostileJsonText, hostileWithin } from '../../../test/support/hostile-json';
import { FakeClock } from '../../common/fake-clock';
import type { ChatChunk } from '../chat.types';
import { StreamAssembly } from '../streaming/stream-assembly';
import { MAX_CONTENT_BLOCKS } from '../wire';
import { fromAnthropicAnswer } from './messages-to-chat-answer';
import { anthropicChunks } from './messages-to-chat-stream';
import type { ProviderTarget } from './llm-provider';
import { isProviderFailure } from './provider-errors';

/**
 * The Anthropic wire's readers (Anthropic's own stream and answer, and Bedrock's, whose events are
 * the same) against whatever an upstream may send: each stream and answer is read, or is the
 * attempt's typed failure; what is read the route can use, sized by nothing the upstream numbered.
 */
const TARGET: ProviderTarget = { provider: 'anthropic', model: 'claude-test' };

const EVENT_SHAPES = [
  '{"type":"message_start","message":{"id":"$","model":"$","usage":"$"}}',
  '{"type":"content_block_start","index":"$","content_block":{"type":"$","text":"$","id":"$","name":"$"}}',
  '{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":"$"}}',
  '{"type":"content_block_delta","index":"$","delta":{"type":"text_delta","text":"$"}}',
  '{"type":"content_block_delta","index":0,"delta":{"type":"$","partial_json":"$","thinking":"$","signature":"$","citation":"$"}}',
  '{"type":"content_block_stop","index":"$"}',
  '{"type":"message_delta","delta":"$","usage":"$"}',
  '{"type":"$","index":"$"}',
];
/** Events that are well formed, so that a sequence gets past its start and into its blocks. */
const WELL_FORMED = [
  '{"type":"message_start","message":{"id":"msg_1","model":"claude-test","usage":{"input_tokens":3,"output_tokens":0}}}',
  '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
  '{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}',
  '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}',
  '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"a\\":"}}',
  '{"type":"content_block_stop","index":1}',
  '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}',
  '{"type":"message_stop"}',
];
const eventText = fc.oneof(
  { arbitrary: fc.constantFrom(...WELL_FORMED), weight: 3 },
  { arbitrary: fc.oneof(...EVENT_SHAPES.map(hostileWithin)), weight: 2 },
  { arbitrary: hostileJsonText, weight: 1 },
);

async function* each<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}

/** The chunks of `events`, or undefined for the attempt's typed failure; any other throw fails. */
async function chunksOrFail(events: unknown[], native: boolean): Promise<ChatChunk[] | undefined> {
  const chunks: ChatChunk[] = [];
  try {
    for await (const chunk of anthropicChunks(each(events), TARGET, new FakeClock(), native)) chunks.push(chunk);
  } catch (error) {
    if (isProviderFailure(error)) return undefined;
    throw error;
  }
  return chunks;
}

describe('the Anthropic wire readers, fuzzed', () => {
  it('read any sequence of events into chunks the route can assemble, or fail the attempt', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(eventText, { maxLength: 12 }), fc.boolean(), async (texts, native) => {
        const chunks = await chunksOrFail(
          texts.map((text) => JSON.parse(text) as unknown),
          native,
        );
        if (chunks === undefined) return;
        const assembly = new StreamAssembly();
        for (const chunk of chunks) assembly.add(chunk);
        const completion = assembly.completion(10);
        expect(typeof completion.usage.total_tokens).toBe('number');
        const message = chunks.at(-1)?.passThroughAnswer;
        if (message) expect((message.content as unknown[]).length).toBeLessThanOrEqual(MAX_CONTENT_BLOCKS);
        expect(Object.getPrototypeOf(message ?? {})).toBe(Object.prototype);
      }),
      { numRuns: 2000 },
    );
  });

  it('read any whole answer as a completion, or fail the attempt', () => {
    const shapes = [
      '{"id":"$","content":[{"type":"$","text":"$","id":"$","name":"$","input":"$"}],"stop_reason":"$","usage":{"input_tokens":"$","output_tokens":"$","cache_read_input_tokens":"$"}}',
      '{"id":"m","content":"$","usage":"$"}',
    ];
    fc.assert(
      fc.property(fc.oneof(hostileJsonText, ...shapes.map(hostileWithin)), (text) => {
        let completion;
        try {
          completion = fromAnthropicAnswer(TARGET, JSON.parse(text), 0);
        } catch (error) {
          if (isProviderFailure(error)) return;
          throw error;
        }
        expect(typeof completion.usage.total_tokens).toBe('number');
        expect(completion.choices).toHaveLength(1);
      }),
      { numRuns: 2000 },
    );
  });

  it('fail the attempt for a block numbered past any answer', async () => {
    for (const index of [MAX_CONTENT_BLOCKS, 200_000_000, 1e308, -1, 0.5]) {
      const events = [
        JSON.parse(WELL_FORMED[0]),
        { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
      ];
      expect(await chunksOrFail(events, true)).toBeUndefined();
    }
  });

  it('fail the attempt, without throwing past the reader, for deeply nested events', async () => {
    const deep = JSON.parse(`{"type":"message_start","message":${deeplyNested(10_000, 'object')}}`) as unknown;
    expect(await chunksOrFail([deep], true)).toBeUndefined();
  });
});
