import { FakeClock } from '../../common/fake-clock';
import { rejection } from '../../../test/support/rejection';
import type { ChatChunk } from '../chat.types';
import { anthropicChunks, anthropicSseEvents } from './messages-to-chat-stream';
import type { ProviderTarget } from './llm-provider';
import type { SseEvent } from '../wire';

const clock = new FakeClock(Date.UTC(2026, 4, 1, 12, 0, 0));
const CREATED = Math.floor(Date.UTC(2026, 4, 1, 12, 0, 0) / 1000);
const target: ProviderTarget = { provider: 'anthropic', model: 'claude-haiku-4-5' };

async function* from<T>(items: readonly T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}

async function collect(events: readonly unknown[]): Promise<ChatChunk[]> {
  const chunks: ChatChunk[] = [];
  for await (const chunk of anthropicChunks(from(events), target, clock)) chunks.push(chunk);
  return chunks;
}

/** What collecting `events` threw, and the chunks yielded before it. */
async function failure(events: readonly unknown[]): Promise<{ error: Error; before: ChatChunk[] }> {
  const before: ChatChunk[] = [];
  const error = await rejection(
    (async () => {
      for await (const chunk of anthropicChunks(from(events), target, clock)) before.push(chunk);
    })(),
  );
  return { error, before };
}

const start = (
  usage: Record<string, unknown> = { input_tokens: 25, output_tokens: 1 },
  overrides: Record<string, unknown> = {},
) => ({
  type: 'message_start',
  message: {
    id: 'msg_01',
    type: 'message',
    role: 'assistant',
    content: [],
    model: 'claude-haiku-4-5-20251001',
    stop_reason: null,
    stop_sequence: null,
    usage,
    ...overrides,
  },
});
const textStart = (index: number) => ({
  type: 'content_block_start',
  index,
  content_block: { type: 'text', text: '' },
});
const text = (index: number, piece: string) => ({
  type: 'content_block_delta',
  index,
  delta: { type: 'text_delta', text: piece },
});
const toolStart = (index: number, id: string, name: string) => ({
  type: 'content_block_start',
  index,
  content_block: { type: 'tool_use', id, name, input: {} },
});
const json = (index: number, partial: string) => ({
  type: 'content_block_delta',
  index,
  delta: { type: 'input_json_delta', partial_json: partial },
});
const blockStop = (index: number) => ({ type: 'content_block_stop', index });
const messageDelta = (stopReason: string | null, usage: Record<string, unknown> = { output_tokens: 12 }) => ({
  type: 'message_delta',
  delta: { stop_reason: stopReason, stop_sequence: null },
  usage,
});
const STOP = { type: 'message_stop' };
const PING = { type: 'ping' };

/** A chunk of the answer `msg_01`, as OpenAI would have streamed it. */
const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
  id: 'msg_01',
  object: 'chat.completion.chunk',
  created: CREATED,
  model: 'claude-haiku-4-5-20251001',
  choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
  usage: null,
});
const usageChunk = (usage: Record<string, unknown>) => ({ ...chunk({}), choices: [], usage });

describe('anthropicChunks', () => {
  it('translates a text stream whole, as OpenAI streams one', async () => {
    const chunks = await collect([
      start(),
      PING,
      textStart(0),
      text(0, 'Hello'),
      PING,
      text(0, ', world.'),
      blockStop(0),
      messageDelta('end_turn'),
      STOP,
    ]);

    expect(chunks).toEqual([
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Hello' }),
      chunk({ content: ', world.' }),
      chunk({}, 'stop'),
      usageChunk({
        prompt_tokens: 25,
        completion_tokens: 12,
        total_tokens: 37,
        prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      }),
    ]);
  });

  it('streams tool calls numbered among tool_use blocks only, name first, then argument pieces', async () => {
    const chunks = await collect([
      start(),
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hidden' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } },
      blockStop(0),
      textStart(1),
      text(1, 'Checking.'),
      blockStop(1),
      toolStart(2, 'toolu_1', 'weather'),
      json(2, ''),
      json(2, '{"city":'),
      json(2, ' "Paris"}'),
      blockStop(2),
      toolStart(3, 'toolu_2', 'now'),
      blockStop(3),
      messageDelta('tool_use'),
      STOP,
    ]);

    expect(chunks.slice(0, -1)).toEqual([
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Checking.' }),
      chunk({
        tool_calls: [{ index: 0, id: 'toolu_1', type: 'function', function: { name: 'weather', arguments: '' } }],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: ' "Paris"}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'toolu_2', type: 'function', function: { name: 'now', arguments: '' } }] }),
      // A tool without input: `{}`, as the non-streamed answer says it.
      chunk({ tool_calls: [{ index: 1, function: { arguments: '{}' } }] }),
      chunk({}, 'tool_calls'),
    ]);
  });

  it('counts cache reads and writes into the prompt, and takes the latest cumulative counts', async () => {
    const chunks = await collect([
      start({ input_tokens: 100, cache_read_input_tokens: 2_000, cache_creation_input_tokens: 300, output_tokens: 1 }),
      textStart(0),
      text(0, 'Hi.'),
      blockStop(0),
      // Newer API versions restate the input counts here; null is not a count and changes nothing.
      messageDelta('end_turn', { input_tokens: 100, cache_read_input_tokens: null, output_tokens: 40 }),
      STOP,
    ]);

    expect(chunks.at(-1)).toEqual(
      usageChunk({
        prompt_tokens: 2_400,
        completion_tokens: 40,
        total_tokens: 2_440,
        prompt_tokens_details: { cached_tokens: 2_000, cache_write_tokens: 300 },
      }),
    );
  });

  it('says which cache writes are kept an hour, as message_start told', async () => {
    const cacheCreation = { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 };
    const chunks = await collect([
      start({ input_tokens: 10, cache_creation_input_tokens: 300, cache_creation: cacheCreation, output_tokens: 1 }),
      messageDelta('end_turn', { output_tokens: 5 }),
      STOP,
    ]);

    expect(chunks.at(-1)?.usage?.prompt_tokens_details).toEqual({
      cached_tokens: 0,
      cache_write_tokens: 300,
      cache_write_1h_tokens: 200,
    });
  });

  it('passes a count that is a number but not a count on to the account, not losing the answer for it', async () => {
    const chunks = await collect([
      start({ input_tokens: -5, output_tokens: 1 }),
      messageDelta('end_turn', { output_tokens: 1e308 }),
      STOP,
    ]);

    expect(chunks.at(-1)?.usage).toMatchObject({ prompt_tokens: -5, completion_tokens: 1e308 });
  });

  it.each([
    ['max_tokens', 'length'],
    ['refusal', 'content_filter'],
    ['stop_sequence', 'stop'],
    ['something_new', 'stop'],
  ])('maps stop_reason %s to finish_reason %s', async (stopReason, finishReason) => {
    const chunks = await collect([start(), messageDelta(stopReason), STOP]);

    expect(chunks.at(-2)).toEqual(chunk({}, finishReason));
  });

  it('says the finish reason once, and finishes with stop when no message_delta came', async () => {
    const twice = await collect([start(), messageDelta('max_tokens'), messageDelta('end_turn'), STOP]);
    const never = await collect([start(), STOP]);

    expect(twice.map((c) => c.choices[0]?.finish_reason)).toEqual([null, 'length', undefined]);
    expect(never.slice(1)).toEqual([
      chunk({}, 'stop'),
      usageChunk({
        prompt_tokens: 25,
        completion_tokens: 1,
        total_tokens: 26,
        prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      }),
    ]);
  });

  it("names the target's model when message_start has none", async () => {
    const [first] = await collect([start(undefined, { model: undefined }), STOP]);

    expect(first.model).toBe('claude-haiku-4-5');
  });

  it('leaves out event types and deltas it does not know', async () => {
    const chunks = await collect([
      start(),
      { type: 'something_new', detail: 1 },
      textStart(0),
      { type: 'content_block_delta', index: 0, delta: { type: 'citations_delta', citation: {} } },
      text(0, 'A'),
      text(0, ''),
      blockStop(0),
      { type: 'content_block_start', index: 1, content_block: { type: 'server_tool_use', id: 's', name: 'web' } },
      blockStop(1),
      STOP,
    ]);

    expect(chunks.slice(1, -2)).toEqual([chunk({ content: 'A' })]);
  });

  it('throws an error event as the failure its type names, after what came before', async () => {
    const { error, before } = await failure([
      start(),
      textStart(0),
      text(0, 'Hel'),
      { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      text(0, 'lo'),
      STOP,
    ]);

    expect(before).toEqual([chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hel' })]);
    expect(error).toMatchObject({ kind: 'transient', code: 'overloaded', upstreamStatus: 529 });
    expect(error.message).not.toContain('Overloaded');
  });

  it.each([
    ['nothing at all', []],
    ['message_start only', [start()]],
    ['everything but message_stop', [start(), textStart(0), text(0, 'Hi'), blockStop(0), messageDelta('end_turn')]],
  ])('throws stream_cut for a stream that ends with %s', async (_name, events) => {
    const { error } = await failure(events);

    expect(error).toMatchObject({ kind: 'transient', code: 'stream_cut' });
    expect(error.message).toBe('target anthropic/claude-haiku-4-5 ended its stream before the answer was complete');
  });

  it.each([
    ['an event that is not an object', [start(), 'text']],
    ['an event without a type', [start(), { index: 0 }]],
    ['content before message_start', [textStart(0), STOP]],
    ['a second message_start', [start(), start()]],
    ['a message without an id', [{ type: 'message_start', message: { usage: {} } }]],
    [
      'a tool_use block without a name',
      [start(), { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't' } }],
    ],
    ['arguments for a block that is not a tool call', [start(), textStart(0), json(0, '{}')]],
    [
      'a text delta without text',
      [start(), textStart(0), { type: 'content_block_delta', index: 0, delta: { type: 'text_delta' } }],
    ],
    ['no usage by message_stop', [start({}), messageDelta('end_turn', {}), STOP]],
  ])('throws bad_response for %s', async (_name, events) => {
    const { error } = await failure(events);

    expect(error).toMatchObject({ kind: 'transient', code: 'bad_response' });
  });

  it('stops reading at message_stop and lets the source go', async () => {
    let read = 0;
    let released = false;
    async function* source(): AsyncGenerator<unknown> {
      try {
        for (const event of [start(), STOP, text(0, 'after the end')]) {
          read++;
          yield event;
        }
      } finally {
        released = true;
      }
    }

    const chunks: ChatChunk[] = [];
    for await (const c of anthropicChunks(source(), target, clock)) chunks.push(c);

    expect(chunks).toHaveLength(3);
    expect(read).toBe(2);
    expect(released).toBe(true);
  });

  it('lets the source go when its reader stops early', async () => {
    let released = false;
    async function* source(): AsyncGenerator<unknown> {
      try {
        yield start();
        yield textStart(0);
        yield text(0, 'more');
      } finally {
        released = true;
      }
    }
    const chunks = anthropicChunks(source(), target, clock);

    await chunks.next();
    await chunks.return(undefined);

    expect(released).toBe(true);
  });
});

describe('anthropicSseEvents', () => {
  const sse = (data: string): SseEvent => ({ event: 'message', data });

  it("parses each event's data", async () => {
    const events: unknown[] = [];
    for await (const event of anthropicSseEvents(
      from([sse('{"type":"ping"}'), sse('{"type":"message_stop"}')]),
      target,
    )) {
      events.push(event);
    }

    expect(events).toEqual([{ type: 'ping' }, { type: 'message_stop' }]);
  });

  it('throws bad_response for data that is not JSON', async () => {
    const error = await rejection(
      (async () => {
        for await (const _event of anthropicSseEvents(from([sse('{"type":')]), target));
      })(),
    );

    expect(error).toMatchObject({ kind: 'transient', code: 'bad_response' });
  });
});
