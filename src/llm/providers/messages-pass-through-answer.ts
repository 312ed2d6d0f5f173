import type { AnthropicStreamEvent, ChatChunk, ChatCompletion, PassThroughEvent } from '../chat.types';
import { isObject } from './json-shape';
import { eventChunks } from './stream-chunks';

type Block = Record<string, unknown>;

/**
 * The `message` a native stream's events add up to, as Anthropic's non-streamed answer would
 * have been: each block as its start gave it, its deltas applied (text, thinking and its
 * signature, a tool's input JSON, citations), the stop reason and the latest usage. Kept whole so
 * that a cached or replayed answer gives back the thinking blocks a tool loop must return.
 * Reads events the translation has already checked.
 */
export class NativeMessageAssembly {
  private message: Record<string, unknown> = {};
  /** By the index Anthropic numbers them with: a map, never an array a large index would stretch. */
  private readonly blocks = new Map<number, Block>();
  /** A tool_use block's input JSON, by block index, until its stop. */
  private readonly inputs = new Map<number, string>();

  add(event: AnthropicStreamEvent): void {
    switch (event.type) {
      case 'message_start':
        if (isObject(event.message)) this.message = { ...event.message };
        return;
      case 'content_block_start':
        if (typeof event.index === 'number' && isObject(event.content_block)) {
          this.blocks.set(event.index, { ...event.content_block });
        }
        return;
      case 'content_block_delta':
        if (typeof event.index === 'number' && isObject(event.delta)) this.delta(event.index, event.delta);
        return;
      case 'content_block_stop':
        if (typeof event.index === 'number') this.stopBlock(event.index);
        return;
      case 'message_delta':
        // Spread, not Object.assign: a `__proto__` key the upstream sent stays a key, not a prototype.
        if (isObject(event.delta)) this.message = { ...this.message, ...event.delta };
        if (isObject(event.usage)) {
          this.message.usage = { ...(isObject(this.message.usage) ? this.message.usage : {}), ...event.usage };
        }
        return;
    }
  }

  /** The message so far; whole once `message_stop` came. */
  whole(): Record<string, unknown> {
    const indexes = [...this.blocks.keys()].sort((a, b) => a - b);
    return { ...this.message, content: indexes.map((index) => this.blocks.get(index)) };
  }

  private delta(index: number, delta: Record<string, unknown>): void {
    const block = this.blocks.get(index);
    if (!block) return;
    switch (delta.type) {
      case 'text_delta':
        block.text = String(block.text ?? '') + String(delta.text ?? '');
        return;
      case 'thinking_delta':
        block.thinking = String(block.thinking ?? '') + String(delta.thinking ?? '');
        return;
      case 'signature_delta':
        block.signature = delta.signature;
        return;
      case 'input_json_delta':
        this.inputs.set(index, (this.inputs.get(index) ?? '') + String(delta.partial_json ?? ''));
        return;
      case 'citations_delta':
        block.citations = [...(Array.isArray(block.citations) ? block.citations : []), delta.citation];
        return;
    }
  }

  private stopBlock(index: number): void {
    const json = this.inputs.get(index);
    const block = this.blocks.get(index);
    if (json === undefined || !block) return;
    this.inputs.delete(index);
    try {
      block.input = JSON.parse(json);
    } catch {
      // Anthropic's own SDK keeps what it can; the text is kept rather than lost.
      block.input = { _arguments: json };
    }
  }
}

/**
 * A whole native message as the events Anthropic would have streamed it in: `message_start`
 * (no content, the input usage), each block's start (empty), one delta with all of it (a
 * thinking block's signature in a delta of its own) and stop, then `message_delta` (stop reason,
 * output usage) and `message_stop`. What a cached or replayed native answer is streamed as.
 */
export function nativeMessageEvents(message: Record<string, unknown>): AnthropicStreamEvent[] {
  const { content, stop_reason: stopReason, stop_sequence: stopSequence, usage, ...rest } = message;
  const events: AnthropicStreamEvent[] = [
    {
      type: 'message_start',
      message: { ...rest, content: [], stop_reason: null, stop_sequence: null, usage: startUsage(usage) },
    },
  ];
  (Array.isArray(content) ? content : []).forEach((block: unknown, index) => {
    if (!isObject(block)) return;
    events.push({ type: 'content_block_start', index, content_block: emptied(block) });
    for (const delta of blockDeltas(block)) events.push({ type: 'content_block_delta', index, delta });
    events.push({ type: 'content_block_stop', index });
  });
  events.push(
    {
      type: 'message_delta',
      delta: { stop_reason: stopReason ?? null, stop_sequence: stopSequence ?? null },
      usage: isObject(usage) ? usage : {},
    },
    { type: 'message_stop' },
  );
  return events;
}

/**
 * A native answer (`passThroughAnswer`) as the chunks of a native stream: each event of
 * {@link nativeMessageEvents} in a chunk of its own with no choices, the usage on the last. What
 * the Messages API replays of a cached or idempotent native answer.
 */
export function nativeMessageChunks(completion: ChatCompletion, message: Record<string, unknown>): ChatChunk[] {
  return eventChunks(completion, nativeMessageEvents(message), passThroughEventOf);
}

/** `message_start` says the input; the output is counted in `message_delta`. */
function startUsage(usage: unknown): Record<string, unknown> {
  return isObject(usage) ? { ...usage, output_tokens: 0 } : { input_tokens: 0, output_tokens: 0 };
}

/** A block as its `content_block_start` says it: what its deltas will carry left empty. */
function emptied(block: Record<string, unknown>): Record<string, unknown> {
  switch (block.type) {
    case 'text':
      return { ...block, text: '', ...(block.citations === undefined ? {} : { citations: [] }) };
    case 'thinking':
      return { ...block, thinking: '', signature: '' };
    case 'tool_use':
      return { ...block, input: {} };
    default:
      return block;
  }
}

function blockDeltas(block: Record<string, unknown>): Array<Record<string, unknown>> {
  switch (block.type) {
    case 'text':
      return [
        { type: 'text_delta', text: block.text ?? '' },
        ...(Array.isArray(block.citations) ? block.citations : []).map((citation) => ({
          type: 'citations_delta',
          citation,
        })),
      ];
    case 'thinking':
      return [
        { type: 'thinking_delta', thinking: block.thinking ?? '' },
        { type: 'signature_delta', signature: block.signature ?? '' },
      ];
    case 'tool_use':
      return [{ type: 'input_json_delta', partial_json: JSON.stringify(block.input ?? {}) }];
    default:
      return [];
  }
}

/**
 * An event of Anthropic's stream as a pass-through chunk carries it, with what the route reads of
 * it: a block's delta is content (thinking too: the commit point), and a thinking delta's text is
 * output the target bills that no translated choice shows.
 */
export function passThroughEventOf(event: AnthropicStreamEvent): PassThroughEvent {
  const delta = event.delta as { type?: unknown; thinking?: unknown } | undefined;
  const thinking = delta?.type === 'thinking_delta' && typeof delta.thinking === 'string' ? delta.thinking : '';
  return { event, content: event.type === 'content_block_delta', hiddenOutputChars: thinking.length };
}
