import { FakeClock } from '../../common/fake-clock';
import { rejection } from '../../../test/support/rejection';
import {
  CALLING_ANSWER,
  CALLING_EVENTS,
  REASONED_ANSWER,
  REASONED_EVENTS,
} from '../../../test/support/responses-stream';
import type { ChatChunk, ChatCompletion } from '../chat.types';
import { StreamAssembly } from '../streaming/stream-assembly';
import type { SseEvent } from '../wire';
import type { ProviderTarget } from './llm-provider';
import { isProviderFailure } from './provider-errors';
import { nativeResponseChunks, nativeResponseEvents } from './responses-pass-through-events';
import { responsesChunks } from './responses-to-chat-stream';

const clock = new FakeClock(Date.UTC(2026, 4, 1, 12, 0, 0));
const target: ProviderTarget = { provider: 'openai', model: 'gpt-5' };

async function* sse(events: readonly unknown[]): AsyncGenerator<SseEvent> {
  for (const event of events) yield { data: typeof event === 'string' ? event : JSON.stringify(event) } as SseEvent;
}

async function collect(events: readonly unknown[]): Promise<ChatChunk[]> {
  const chunks: ChatChunk[] = [];
  for await (const chunk of responsesChunks(sse(events), target, clock)) chunks.push(chunk);
  return chunks;
}

async function failure(events: readonly unknown[]): Promise<{ error: Error; before: ChatChunk[] }> {
  const before: ChatChunk[] = [];
  const error = await rejection(
    (async () => {
      for await (const chunk of responsesChunks(sse(events), target, clock)) before.push(chunk);
    })(),
  );
  return { error, before };
}

function assembled(chunks: ChatChunk[]): ChatCompletion {
  const assembly = new StreamAssembly();
  for (const chunk of chunks) assembly.add(chunk);
  return assembly.completion(100);
}

describe('responsesChunks', () => {
  it('reads a reasoning answer into the completion the books keep, each event carried as it came', async () => {
    const chunks = await collect(REASONED_EVENTS);

    const carried = chunks.map((chunk) => chunk.passThroughEvent?.event).filter((event) => event !== undefined);
    expect(carried).toEqual(REASONED_EVENTS);
    const completion = assembled(chunks);
    expect(completion.choices[0].message.content).toBe('Paris.');
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(completion.usage).toEqual({
      prompt_tokens: 40,
      completion_tokens: 300,
      total_tokens: 340,
      prompt_tokens_details: { cached_tokens: 8 },
      completion_tokens_details: { reasoning_tokens: 290 },
    });
    expect(completion.passThroughAnswer).toEqual(REASONED_ANSWER);
  });

  it('makes the reasoning the commit point, and counts its text as output no choice shows', async () => {
    const chunks = await collect(REASONED_EVENTS);
    const first = chunks.findIndex((chunk) => chunk.passThroughEvent?.content);

    expect((chunks[first].passThroughEvent?.event as { type: string }).type).toBe(
      'response.reasoning_summary_text.delta',
    );
    const hidden = chunks.reduce((sum, chunk) => sum + (chunk.passThroughEvent?.hiddenOutputChars ?? 0), 0);
    expect(hidden).toBe('The user asks for a capital.'.length);
  });

  it('reads a function call as a tool call, numbered among tool calls, by its call id', async () => {
    const completion = assembled(await collect(CALLING_EVENTS));

    expect(completion.choices[0].message).toMatchObject({
      content: 'Let me look.',
      tool_calls: [
        { id: 'call_weather_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
      ],
    });
    expect(completion.choices[0].finish_reason).toBe('tool_calls');
  });

  it('says an answer cut at its cap is cut', async () => {
    const incomplete = {
      ...REASONED_ANSWER,
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
    };
    const events = [...REASONED_EVENTS.slice(0, -1), { type: 'response.incomplete', response: incomplete }];

    expect(assembled(await collect(events)).choices[0].finish_reason).toBe('length');
  });

  it('reads a replayed answer as the same stream: the replay is a stream the reader takes', async () => {
    for (const answer of [REASONED_ANSWER, CALLING_ANSWER]) {
      const replayed = await collect(nativeResponseEvents(answer));
      const completion = assembled(replayed);

      expect(completion.passThroughAnswer).toEqual(answer);
      expect(completion.choices[0].message).toEqual(
        assembled(await collect(nativeStreamOf(answer))).choices[0].message,
      );
    }
  });

  it('replays a cached answer as chunks that carry its events and its usage last', () => {
    const completion = assembled([]);
    const chunks = nativeResponseChunks(
      { ...completion, usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } },
      REASONED_ANSWER,
    );

    expect(chunks.at(-1)?.usage).toEqual({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
    expect(chunks.every((chunk) => chunk.choices.length === 0 && chunk.passThroughEvent)).toBe(true);
    expect(chunks.some((chunk) => chunk.passThroughEvent?.content)).toBe(true);
  });

  it('fails the attempt on an error event or a failed response, reading the code, never the message', async () => {
    const limited = await failure([
      REASONED_EVENTS[0],
      { type: 'error', code: 'rate_limit_exceeded', message: 'secret prompt text', param: null },
    ]);
    const failed = await failure([
      REASONED_EVENTS[0],
      {
        type: 'response.failed',
        response: { ...REASONED_ANSWER, status: 'failed', error: { code: 'server_error', message: 'x' } },
      },
    ]);

    expect(isProviderFailure(limited.error) && limited.error.code).toBe('rate_limited');
    expect(limited.error.message).not.toContain('secret prompt text');
    expect(isProviderFailure(failed.error) && failed.error.code).toBe('upstream_error');
    expect(failed.before).toHaveLength(1);
  });

  it.each([
    ['an event before the response was created', [REASONED_EVENTS[2]]],
    ['a second start', [REASONED_EVENTS[0], REASONED_EVENTS[0]]],
    ['text that is not JSON', [REASONED_EVENTS[0], '{"type":"response.output_text.delta",']],
    [
      'a delta that is not text',
      [REASONED_EVENTS[0], { type: 'response.output_text.delta', output_index: 0, delta: 7 }],
    ],
    [
      'arguments of no function call',
      [REASONED_EVENTS[0], { type: 'response.function_call_arguments.delta', output_index: 3, delta: '{' }],
    ],
    [
      'an output index past any answer',
      [REASONED_EVENTS[0], { type: 'response.output_item.added', output_index: 1e9, item: { type: 'message' } }],
    ],
    [
      'a function call with no name',
      [
        REASONED_EVENTS[0],
        { type: 'response.output_item.added', output_index: 0, item: { type: 'function_call', call_id: 'c' } },
      ],
    ],
    ['an event type that could not name an event', [REASONED_EVENTS[0], { type: 'x\ndata: {}' }]],
    [
      'an end whose response is not an answer',
      [REASONED_EVENTS[0], { type: 'response.completed', response: { status: 'completed' } }],
    ],
  ])('refuses %s as a malformed answer', async (_case, events) => {
    const { error } = await failure(events);

    expect(isProviderFailure(error) && error.code).toBe('bad_response');
  });

  it('says a stream that ended before its response completed was cut', async () => {
    const { error, before } = await failure(REASONED_EVENTS.slice(0, -1));

    expect(isProviderFailure(error) && error.code).toBe('stream_cut');
    expect(before).toHaveLength(REASONED_EVENTS.length - 1);
  });
});

/** The events OpenAI streams `answer` in, from the fixtures: the same answer, said event by event. */
function nativeStreamOf(answer: object): readonly object[] {
  return answer === REASONED_ANSWER ? REASONED_EVENTS : CALLING_EVENTS;
}
