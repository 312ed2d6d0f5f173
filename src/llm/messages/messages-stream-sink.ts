import { type ResilienceError, toAnthropicError } from '../../common';
import type { ChatChunk, ChatUsage } from '../chat.types';
import type { ChatStreamSink } from '../streaming/chat-stream-sink';
import type { SseReply } from '../streaming/sse-reply';
import { messageId, messagesStopReason, type MessagesStopReason, messagesUsage } from './messages-answer';

/** The block being streamed now: its index in the message, and what it is. */
interface OpenBlock {
  index: number;
  kind: 'text' | 'tool_use';
}

/**
 * A streamed answer in Anthropic's events, from the chunks the pipeline streams: `message_start`
 * and a `ping` with the first chunk, then each block as `content_block_start`, its deltas
 * (`text_delta`, `input_json_delta`) and `content_block_stop`, then `message_delta` (the stop
 * reason and the usage, with the `bulkhead` field) and `message_stop`. A failure after the commit
 * point is an `error` event, as Anthropic sends one mid-stream.
 */
export class MessagesStreamSink implements ChatStreamSink {
  private started = false;
  private current: OpenBlock | undefined;
  private blocks = 0;
  /** A tool call's index in the chunks → its block's index in the message. */
  private readonly toolBlocks = new Map<number, number>();
  private stopReason: MessagesStopReason = 'end_turn';
  private usage: ChatUsage | undefined;
  private bulkhead: unknown;

  constructor(
    private readonly sse: SseReply,
    private readonly labels: { callId?: string },
  ) {}

  get opened(): boolean {
    return this.sse.opened;
  }

  open(headers: Record<string, string>): void {
    this.sse.open(headers);
  }

  write(event: object): Promise<void> | undefined {
    const chunk = event as ChatChunk;
    let waiting = this.start(chunk);
    if (chunk.usage) this.usage = chunk.usage;
    if (chunk.bulkhead !== undefined) this.bulkhead = chunk.bulkhead;
    const choice = chunk.choices[0];
    if (!choice) return waiting;
    const { delta } = choice;
    if (typeof delta.content === 'string' && delta.content.length > 0) {
      const index = this.blockFor('text');
      waiting = this.sse.writeNamed('content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'text_delta', text: delta.content },
      });
    }
    for (const call of delta.tool_calls ?? []) {
      let index = this.toolBlocks.get(call.index);
      if (index === undefined) {
        index = this.startBlock('tool_use', {
          type: 'tool_use',
          id: call.id ?? `toolu_${this.blocks}`,
          name: call.function?.name ?? '',
          input: {},
        });
        this.toolBlocks.set(call.index, index);
      }
      const partial = call.function?.arguments;
      if (partial) {
        waiting = this.sse.writeNamed('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: partial },
        });
      }
    }
    if (choice.finish_reason) {
      this.stopReason = messagesStopReason(choice.finish_reason);
      this.closeBlock();
    }
    return waiting;
  }

  end(): void {
    // Every stream has chunks; should one have none, its client still gets a whole message.
    this.start({
      id: this.labels.callId ?? 'empty',
      object: 'chat.completion.chunk',
      created: 0,
      model: '',
      choices: [],
    });
    this.closeBlock();
    const { input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens } = messagesUsage(
      this.usage,
    );
    const messageDelta = {
      type: 'message_delta',
      delta: { stop_reason: this.stopReason, stop_sequence: null },
      usage: { input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens },
      ...(this.bulkhead !== undefined ? { bulkhead: this.bulkhead } : {}),
    };
    this.sse.finish(
      `event: message_delta\ndata: ${JSON.stringify(messageDelta)}\n\n` +
        `event: message_stop\ndata: ${JSON.stringify({ type: 'message_stop' })}\n\n`,
    );
  }

  fail(error: ResilienceError): void {
    this.sse.finish(`event: error\ndata: ${JSON.stringify(toAnthropicError(error, this.labels))}\n\n`);
  }

  destroy(): void {
    this.sse.destroy();
  }

  /** `message_start` and a `ping`, once, from the first chunk's id and model. */
  private start(chunk: ChatChunk): Promise<void> | undefined {
    if (this.started) return undefined;
    this.started = true;
    this.sse.writeNamed('message_start', {
      type: 'message_start',
      message: {
        id: messageId(chunk.id),
        type: 'message',
        role: 'assistant',
        model: chunk.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0 },
      },
    });
    return this.sse.writeNamed('ping', { type: 'ping' });
  }

  /** The index of the open block of `kind`, starting one (and stopping the one before) if needed. */
  private blockFor(kind: 'text'): number {
    if (this.current?.kind === kind) return this.current.index;
    return this.startBlock(kind, { type: 'text', text: '' });
  }

  private startBlock(kind: OpenBlock['kind'], contentBlock: object): number {
    this.closeBlock();
    const index = this.blocks++;
    this.current = { index, kind };
    this.sse.writeNamed('content_block_start', { type: 'content_block_start', index, content_block: contentBlock });
    return index;
  }

  private closeBlock(): void {
    if (!this.current) return;
    this.sse.writeNamed('content_block_stop', { type: 'content_block_stop', index: this.current.index });
    this.current = undefined;
  }
}
