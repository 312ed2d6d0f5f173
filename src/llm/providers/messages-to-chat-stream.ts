import type { Clock } from '../../common';
import type { AnthropicStreamEvent, ChatChunk, ChatDelta, FinishReason } from '../chat.types';
import { NativeMessageAssembly, passThroughEventOf } from './messages-pass-through-answer';
import { chatFinishReason, isAnthropicStreamEvent, isIndexBelow, MAX_CONTENT_BLOCKS } from '../wire';
import { chatUsage } from './messages-to-chat-answer';
import { isCount, isObject } from './json-shape';
import type { ProviderTarget } from './llm-provider';
import { malformedAnswerError, streamCutError, streamErrorEvent } from './provider-errors';
import { choiceChunk, type ChunkHead } from './stream-chunks';
import type { SseEvent } from '../wire';

/**
 * The Messages API's stream events (each `{"type": "message_start", …}` parsed) as the
 * `chat.completion.chunk`s OpenAI would have streamed for the same answer: a first chunk with
 * the role and empty content, text and tool-call pieces as they come, a chunk with the finish
 * reason, then the usage chunk (no choices) last. Every chunk has the same id, model and
 * `created` (the clock's wall time at `message_start`: Anthropic sends none).
 *
 * Tool calls are numbered among tool_use blocks only, as OpenAI numbers them; thinking blocks
 * and event types this does not know are left out. An `error` event is thrown as
 * {@link streamErrorEvent}, events that are not the Messages API's as a malformed answer, and an
 * end without `message_stop` as {@link streamCutError}. Ends at `message_stop`, which lets the
 * source go (its `return()`).
 *
 * `native`: the stream of a request sent as its client sent it (a pass-through). Each chunk also
 * carries the event it was read from (`passThroughEvent`; an event with nothing to say in chunks,
 * thinking or a ping, comes in a chunk of its own with no choices), and the last one the whole
 * message (`passThroughAnswer`)
 * the events add up to, for the cache and an idempotent replay.
 */
export async function* anthropicChunks(
  events: AsyncIterable<unknown>,
  target: ProviderTarget,
  clock: Clock,
  native = false,
): AsyncGenerator<ChatChunk> {
  const translation = new AnthropicStreamTranslation(target, clock);
  const message = native ? new NativeMessageAssembly() : undefined;
  for await (const event of events) {
    const chunks = translation.read(event);
    if (message) {
      const last = chunks.at(-1) ?? translation.bareChunk();
      if (last) {
        last.passThroughEvent = passThroughEventOf(event as AnthropicStreamEvent);
        if (!chunks.includes(last)) chunks.push(last);
      }
      message.add(event as AnthropicStreamEvent);
      if (translation.ended && last) last.passThroughAnswer = message.whole();
    }
    yield* chunks;
    if (translation.ended) return;
  }
  throw streamCutError(target);
}

/** The events of Anthropic's `text/event-stream` with each one's data parsed, for {@link anthropicChunks}. */
export async function* anthropicSseEvents(
  events: AsyncIterable<SseEvent>,
  target: ProviderTarget,
): AsyncGenerator<unknown> {
  for await (const event of events) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(event.data);
    } catch {
      throw malformedAnswerError(target, 200);
    }
    yield parsed;
  }
}

/** Where one tool_use block's call stands: its OpenAI index, and whether any arguments came. */
interface ToolCallState {
  readonly index: number;
  argued: boolean;
}

/** The counts of Anthropic's usage that {@link chatUsage} reads. */
const USAGE_COUNTS = ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'];

/** The state of one streamed answer: what `message_start` said, the tool calls so far, the usage. */
class AnthropicStreamTranslation {
  /** Set by `message_stop`: nothing after it is read. */
  ended = false;
  private head: ChunkHead | undefined;
  private readonly usage: Record<string, unknown> = {};
  private finished = false;
  /** Tool calls by the content block index Anthropic gives them. */
  private readonly toolCalls = new Map<number, ToolCallState>();

  constructor(
    private readonly target: ProviderTarget,
    private readonly clock: Clock,
  ) {}

  /** The chunks one event makes: none, one, or (at `message_stop`) the last ones. */
  read(event: unknown): ChatChunk[] {
    // The wire's check first: every field read below has the type and the bounds it relies on.
    if (!isAnthropicStreamEvent(event)) throw this.malformed();
    if (event.type === 'ping') return [];
    if (event.type === 'error') throw streamErrorEvent(this.target, event.error, this.clock.wallNow());
    if (event.type === 'message_start') return this.start(event.message);
    // Nothing else means anything before the message it belongs to.
    if (!this.head) throw this.malformed();
    switch (event.type) {
      case 'content_block_start':
        return this.blockStart(event.index, event.content_block);
      case 'content_block_delta':
        return this.blockDelta(event.index, event.delta);
      case 'content_block_stop':
        return this.blockStop(event.index);
      case 'message_delta':
        return this.messageDelta(event.delta, event.usage);
      case 'message_stop':
        return this.stop();
      default:
        // Anthropic may add event types; a new one must not fail every stream.
        return [];
    }
  }

  private start(message: unknown): ChatChunk[] {
    if (this.head || !isObject(message) || typeof message.id !== 'string') throw this.malformed();
    this.head = {
      id: message.id,
      model: typeof message.model === 'string' ? message.model : this.target.model,
      created: Math.floor(this.clock.wallNow() / 1000),
    };
    this.mergeUsage(message.usage);
    return [this.chunk({ role: 'assistant', content: '' })];
  }

  private blockStart(index: unknown, block: unknown): ChatChunk[] {
    // Blocks are numbered by Anthropic: past any answer's count it is not one, and nothing is sized by it.
    if (!isIndexBelow(index, MAX_CONTENT_BLOCKS) || !isObject(block)) throw this.malformed();
    if (block.type === 'text') {
      // The text comes in deltas; a start that already holds some is said too.
      return typeof block.text === 'string' && block.text !== '' ? [this.chunk({ content: block.text })] : [];
    }
    if (block.type !== 'tool_use') return [];
    if (typeof block.id !== 'string' || typeof block.name !== 'string') throw this.malformed();
    const call = { index: this.toolCalls.size, argued: false };
    this.toolCalls.set(index, call);
    const piece = { index: call.index, id: block.id, type: 'function' as const };
    return [this.chunk({ tool_calls: [{ ...piece, function: { name: block.name, arguments: '' } }] })];
  }

  private blockDelta(index: unknown, delta: unknown): ChatChunk[] {
    if (!isObject(delta)) throw this.malformed();
    if (delta.type === 'text_delta') {
      if (typeof delta.text !== 'string') throw this.malformed();
      return delta.text === '' ? [] : [this.chunk({ content: delta.text })];
    }
    if (delta.type !== 'input_json_delta') return [];
    const call = isCount(index) ? this.toolCalls.get(index) : undefined;
    if (!call || typeof delta.partial_json !== 'string') throw this.malformed();
    if (delta.partial_json === '') return [];
    call.argued = true;
    return [this.arguments(call, delta.partial_json)];
  }

  private blockStop(index: unknown): ChatChunk[] {
    const call = isCount(index) ? this.toolCalls.get(index) : undefined;
    // A tool without input streams no JSON at all; `complete` answers `{}` for it, and so does this.
    if (!call || call.argued) return [];
    call.argued = true;
    return [this.arguments(call, '{}')];
  }

  private messageDelta(delta: unknown, usage: unknown): ChatChunk[] {
    this.mergeUsage(usage);
    if (this.finished) return [];
    this.finished = true;
    return [this.chunk({}, chatFinishReason(isObject(delta) ? delta.stop_reason : undefined))];
  }

  private stop(): ChatChunk[] {
    const usage = chatUsage(this.usage);
    if (!usage) throw this.malformed();
    this.ended = true;
    const last: ChatChunk = { ...this.chunk({}), choices: [], usage };
    return this.finished ? [last] : [this.chunk({}, 'stop'), last];
  }

  /**
   * `message_delta`'s counts are cumulative and may restate `message_start`'s (input and cache
   * counts included): the latest count of each kind wins.
   */
  private mergeUsage(usage: unknown): void {
    if (!isObject(usage)) return;
    for (const name of USAGE_COUNTS) {
      // Any number: the account bounds and counts a bad one, and the answer is not lost for it.
      const count = usage[name];
      if (typeof count === 'number') this.usage[name] = count;
    }
    if (isObject(usage.cache_creation)) this.usage.cache_creation = usage.cache_creation;
  }

  /** A chunk that adds nothing (for a native event with no chunk of its own); none before `message_start`. */
  bareChunk(): ChatChunk | undefined {
    return this.head ? { ...this.chunk({}), choices: [] } : undefined;
  }

  private arguments(call: ToolCallState, text: string): ChatChunk {
    return this.chunk({ tool_calls: [{ index: call.index, function: { arguments: text } }] });
  }

  private chunk(delta: ChatDelta, finishReason: FinishReason | null = null): ChatChunk {
    return choiceChunk(this.head as ChunkHead, delta, finishReason);
  }

  private malformed(): Error {
    return malformedAnswerError(this.target, 200);
  }
}
