import fc from 'fast-check';
import { deeplyNested, hostileJsonText, hostileWithin } from '../../../test/support/hostile-json';
import { REASONED_EVENTS } from '../../../test/support/responses-stream';
import { FakeClock } from '../../common/fake-clock';
import type { ChatChunk } from '../chat.types';
import { ResponseIds } from '../responses/chat-to-responses-answer';
import { NativeResponseStream } from '../responses/native-response-stream';
import { StreamAssembly } from '../streaming/stream-assembly';
import { RESPONSES_EVENT_TYPE, type SseEvent } from '../wire';
import type { ProviderTarget } from './llm-provider';
import { isProviderFailure } from './provider-errors';
import { responsesChunks } from './responses-to-chat-stream';

/**
 * The Responses stream's reader, and what the client's ingress makes of what it read, against
 * whatever an upstream may send: each stream is read, or is the attempt's typed failure; what is
 * read the route can assemble and the ingress can pass on, with no event type it could not frame.
 */
const TARGET: ProviderTarget = { provider: 'openai', model: 'gpt-5' };

const EVENT_SHAPES = [
  '{"type":"response.created","response":{"id":"$","model":"$","created_at":"$"}}',
  '{"type":"response.output_item.added","output_index":"$","item":{"type":"$","id":"$","call_id":"$","name":"$"}}',
  '{"type":"response.output_item.added","output_index":2,"item":{"type":"function_call","call_id":"c","name":"$"}}',
  '{"type":"response.output_text.delta","output_index":"$","item_id":"$","delta":"$"}',
  '{"type":"response.function_call_arguments.delta","output_index":"$","delta":"$"}',
  '{"type":"response.reasoning_summary_text.delta","output_index":0,"delta":"$"}',
  '{"type":"response.completed","response":{"status":"$","output":"$","usage":"$"}}',
  '{"type":"response.completed","response":{"status":"completed","output":[{"type":"$","role":"$","content":"$","call_id":"$","name":"$","arguments":"$"}],"usage":{"input_tokens":"$","output_tokens":"$"}}}',
  '{"type":"response.failed","response":{"error":"$"}}',
  '{"type":"$","output_index":"$","item_id":"$","response":"$","item":"$"}',
];
/** Events as OpenAI sends them, so that a sequence gets past its start and into its items. */
const WELL_FORMED = [
  ...REASONED_EVENTS.map((event) => JSON.stringify(event)),
  '{"type":"response.output_item.added","output_index":2,"item":{"type":"function_call","call_id":"c","name":"f","arguments":""}}',
  '{"type":"response.function_call_arguments.delta","output_index":2,"delta":"{\\"a\\":"}',
];
const eventText = fc.oneof(
  { arbitrary: fc.constantFrom(...WELL_FORMED), weight: 3 },
  { arbitrary: fc.oneof(...EVENT_SHAPES.map(hostileWithin)), weight: 2 },
  { arbitrary: hostileJsonText, weight: 1 },
);

async function* sse(texts: string[]): AsyncGenerator<SseEvent> {
  for (const data of texts) yield { data } as SseEvent;
}

/** The chunks of `texts`, or undefined for the attempt's typed failure; any other throw fails. */
async function chunksOrFail(texts: string[]): Promise<ChatChunk[] | undefined> {
  const chunks: ChatChunk[] = [];
  try {
    for await (const chunk of responsesChunks(sse(texts), TARGET, new FakeClock())) chunks.push(chunk);
  } catch (error) {
    if (isProviderFailure(error)) return undefined;
    throw error;
  }
  return chunks;
}

describe('the Responses stream reader, fuzzed', () => {
  it('reads any sequence of events into chunks the route assembles and the ingress passes on, or fails the attempt', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(eventText, { maxLength: 14 }), async (texts) => {
        const chunks = await chunksOrFail(texts);
        if (chunks === undefined) return;
        const assembly = new StreamAssembly();
        for (const chunk of chunks) assembly.add(chunk);
        expect(typeof assembly.completion(10).usage.total_tokens).toBe('number');
        const ingress = new NativeResponseStream({ model: 'gpt5', input: 'hi', store: true }, new ResponseIds('call'));
        for (const chunk of chunks) {
          const event = chunk.passThroughEvent?.event;
          const passed = event && ingress.pass(event);
          if (passed) expect(RESPONSES_EVENT_TYPE.test(passed.type)).toBe(true);
        }
        const end = ingress.end(chunks.at(-1)?.usage ?? undefined, { servedBy: 'openai/gpt-5' });
        if (end) expect(JSON.parse(JSON.stringify(end.fields))).toMatchObject({ response: { object: 'response' } });
      }),
      { numRuns: 1500 },
    );
  });

  it('fails the attempt, without throwing past the reader, for deeply nested events', async () => {
    const deep = `{"type":"response.created","response":${deeplyNested(10_000, 'object')}}`;
    expect(await chunksOrFail([deep])).toBeUndefined();
  });
});
