import type { Clock } from '../../common';
import type { ChatChunk, ChatDelta, FinishReason, WireEvent } from '../chat.types';
import { isResponsesStreamEvent, type OpenAiResponsesAnswer, type SseEvent } from '../wire';
import { isObject } from './json-shape';
import type { ProviderTarget } from './llm-provider';
import { malformedAnswerError, streamCutError, streamErrorEvent } from './provider-errors';
import { responsesEventOf } from './responses-pass-through-events';
import { choiceChunk, type ChunkHead } from './stream-chunks';
import { chatUsage, finishReason } from './responses-pass-through-answer';

/**
 * A target's Responses stream (a Responses request sent as it came, `stream: true`) as the
 * `chat.completion.chunk`s the pipeline keeps its books by, each event checked first
 * (`wire/openai-responses`): a first chunk with the role at `response.created`, text, refusal
 * and function-call pieces as they come, then at `response.completed` (or `.incomplete`) the
 * finish reason and the usage chunk. Every chunk carries the event it was read from
 * (`passThroughEvent`; an event with nothing to say in chunks, reasoning or a content part's
 * start, comes in a chunk of its own with no choices), which the client's ingress streams as it
 * came; the last one carries the whole response (`passThroughAnswer`) for the cache and an
 * idempotent replay.
 *
 * Function calls are numbered among function calls, as Chat Completions numbers tool calls. An
 * `error` event or `response.failed` is thrown as {@link streamErrorEvent} (its code read, never
 * its message), events that are not the Responses API's as a malformed answer, and an end
 * before the response completed as {@link streamCutError}.
 */
export async function* responsesChunks(
  events: AsyncIterable<SseEvent>,
  target: ProviderTarget,
  clock: Clock,
): AsyncGenerator<ChatChunk> {
  const translation = new ResponsesStreamTranslation(target, clock);
  for await (const { data } of events) {
    let event: unknown;
    try {
      event = JSON.parse(data);
    } catch {
      throw malformedAnswerError(target, 200);
    }
    const chunks = translation.read(event);
    const last = chunks.at(-1) ?? translation.bareChunk();
    last.passThroughEvent = responsesEventOf(event as WireEvent);
    if (!chunks.includes(last)) chunks.push(last);
    yield* chunks;
    if (translation.ended) return;
  }
  throw streamCutError(target);
}

/** Error codes of a Responses failure as the error types a status is read from (`streamErrorEvent`). */
const FAILURE_TYPES: ReadonlyMap<string, string> = new Map([
  ['rate_limit_exceeded', 'rate_limit_error'],
  ['server_error', 'server_error'],
  ['invalid_prompt', 'invalid_request_error'],
]);

/** The state of one streamed answer: what `response.created` said, the function calls so far. */
class ResponsesStreamTranslation {
  /** Set by the response's end: nothing after it is read. */
  ended = false;
  private head: ChunkHead | undefined;
  /** Function calls by the output index the target gives their items → their tool-call index. */
  private readonly calls = new Map<number, number>();

  constructor(
    private readonly target: ProviderTarget,
    private readonly clock: Clock,
  ) {}

  /** The chunks one event makes: none, one, or (at the end) the last ones. */
  read(event: unknown): ChatChunk[] {
    // The wire's check first: every field read below has the type and the bounds it relies on.
    if (!isResponsesStreamEvent(event)) throw this.malformed();
    if (event.type === 'error') throw this.failed(event);
    if (event.type === 'response.failed') throw this.failed((event.response as { error?: unknown }).error);
    if (event.type === 'response.created') return this.start(event.response as Record<string, unknown>);
    // Nothing else means anything before the response it belongs to.
    if (!this.head) throw this.malformed();
    switch (event.type) {
      case 'response.output_item.added':
        return this.itemAdded(event.output_index as number, event.item as Record<string, unknown>);
      case 'response.output_text.delta':
        return this.text({ content: event.delta as string });
      case 'response.refusal.delta':
        return this.text({ refusal: event.delta as string });
      case 'response.function_call_arguments.delta':
        return this.arguments(event.output_index as number, event.delta as string);
      case 'response.completed':
      case 'response.incomplete':
        return this.end(event.response as OpenAiResponsesAnswer);
      default:
        // Reasoning, content parts, `.done` events: the client gets them; the books need none.
        return [];
    }
  }

  /** A chunk that adds nothing, for an event with no chunk of its own (before `response.created` too). */
  bareChunk(): ChatChunk {
    const { id, model, created } = this.head ?? {
      id: 'resp',
      model: this.target.model,
      created: Math.floor(this.clock.wallNow() / 1000),
    };
    return { id, object: 'chat.completion.chunk', created, model, choices: [], usage: null };
  }

  private start(response: Record<string, unknown>): ChatChunk[] {
    if (this.head) throw this.malformed();
    this.head = {
      id: typeof response.id === 'string' ? response.id : 'resp',
      model: typeof response.model === 'string' ? response.model : this.target.model,
      created: typeof response.created_at === 'number' ? response.created_at : Math.floor(this.clock.wallNow() / 1000),
    };
    return [this.chunk({ role: 'assistant', content: '' })];
  }

  private itemAdded(outputIndex: number, item: Record<string, unknown>): ChatChunk[] {
    if (item.type !== 'function_call') return [];
    const { call_id: callId, name } = item;
    if (typeof callId !== 'string' || typeof name !== 'string' || this.calls.has(outputIndex)) throw this.malformed();
    const index = this.calls.size;
    this.calls.set(outputIndex, index);
    const start = { index, id: callId, type: 'function' as const, function: { name, arguments: '' } };
    return [this.chunk({ tool_calls: [start] })];
  }

  private text(delta: ChatDelta): ChatChunk[] {
    return (delta.content ?? delta.refusal) === '' ? [] : [this.chunk(delta)];
  }

  private arguments(outputIndex: number, piece: string): ChatChunk[] {
    const index = this.calls.get(outputIndex);
    if (index === undefined) throw this.malformed();
    return piece === '' ? [] : [this.chunk({ tool_calls: [{ index, function: { arguments: piece } }] })];
  }

  private end(response: OpenAiResponsesAnswer): ChatChunk[] {
    this.ended = true;
    const finish: FinishReason = finishReason(response, this.calls.size > 0);
    const last: ChatChunk = { ...this.chunk({}), choices: [], usage: chatUsage(response.usage) };
    last.passThroughAnswer = response as Record<string, unknown>;
    return [this.chunk({}, finish), last];
  }

  private failed(error: unknown): Error {
    const code = isObject(error) && typeof error.code === 'string' ? error.code : '';
    return streamErrorEvent(this.target, { type: FAILURE_TYPES.get(code) ?? 'server_error' }, this.clock.wallNow());
  }

  private chunk(delta: ChatDelta, finishReason: FinishReason | null = null): ChatChunk {
    return choiceChunk(this.head as ChunkHead, delta, finishReason);
  }

  private malformed(): Error {
    return malformedAnswerError(this.target, 200);
  }
}
