import { type ResilienceError, toAnthropicError } from '../../common';
import type { AnthropicStreamEvent, ChatChunk, ChatChunkChoice, FinishReason } from '../chat.types';
import type { SseReply } from '../streaming/sse-reply';
import { TranslatedStreamSink } from '../streaming/translated-stream-sink';
import { answerStopReason } from '../wire';
import { messageId, messagesUsage, nativeUsage } from './chat-to-messages-answer';

/** The block being streamed now: its index in the message, and what it is (a refusal is a text block of its own). */
interface OpenBlock {
  index: number;
  kind: 'text' | 'refusal' | 'tool_use';
}

/** An event type as Anthropic names them: anything else is not written into the stream's framing. */
const EVENT_TYPE = /^[a-z_]{1,64}$/;

/**
 * A streamed answer in Anthropic's events, from the chunks the pipeline streams: `message_start`
 * and a `ping` with the first chunk, then each block as `content_block_start`, its deltas
 * (`text_delta`, `input_json_delta`) and `content_block_stop`, then `message_delta` (the stop
 * reason and the usage, with the `bulkhead` field) and `message_stop`. A refusal
 * (`delta.refusal`) is a text block of its own and makes the stop reason `refusal` (see
 * {@link answerStopReason}), as Anthropic answers a declined turn. A failure after the commit
 * point is an `error` event, as Anthropic sends one mid-stream.
 *
 * A native stream (an `anthropic` or `bedrock` target sent the request as it came) is passed on
 * event by event as the target sent it, thinking included; only its `message_delta` waits for the
 * end, to carry the `bulkhead` field.
 */
export class MessagesStreamSink extends TranslatedStreamSink {
  private current: OpenBlock | undefined;
  private blocks = 0;
  /** A tool call's index in the chunks → its block's index in the message. */
  private readonly toolBlocks = new Map<number, number>();
  private finish: FinishReason | null = null;
  /** Whether the model refused, which the stop reason says. */
  private refused = false;
  /** A native stream's `message_delta`, written at the end with the `bulkhead` field. */
  private nativeDelta: AnthropicStreamEvent | undefined;

  constructor(
    sse: SseReply,
    private readonly labels: { callId?: string },
  ) {
    super(sse);
  }

  fail(error: ResilienceError): void {
    this.sse.finish(`event: error\ndata: ${JSON.stringify(toAnthropicError(error, this.labels))}\n\n`);
  }

  /** `message_start` and a `ping`, from the first chunk's id and model; a native stream has its own. */
  protected begin(first: ChatChunk | undefined): Promise<void> | undefined {
    if (first?.passThroughEvent) return undefined;
    this.sse.writeNamed('message_start', {
      type: 'message_start',
      message: {
        id: messageId(first?.id ?? this.labels.callId ?? 'empty'),
        type: 'message',
        role: 'assistant',
        model: first?.model ?? '',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0 },
      },
    });
    return this.sse.writeNamed('ping', { type: 'ping' });
  }

  protected override translateChunk(chunk: ChatChunk): Promise<void> | undefined {
    const event = chunk.passThroughEvent?.event;
    if (!event) return super.translateChunk(chunk);
    if (event.type === 'message_delta') this.nativeDelta = event;
    else if (event.type !== 'message_stop' && EVENT_TYPE.test(event.type))
      return this.sse.writeNamed(event.type, event);
    return undefined;
  }

  protected translate({ delta, finish_reason: finish }: ChatChunkChoice): Promise<void> | undefined {
    let waiting: Promise<void> | undefined;
    if (typeof delta.content === 'string' && delta.content.length > 0) {
      waiting = this.sse.writeNamed('content_block_delta', {
        type: 'content_block_delta',
        index: this.textBlock('text'),
        delta: { type: 'text_delta', text: delta.content },
      });
    }
    if (typeof delta.refusal === 'string' && delta.refusal.length > 0) {
      this.refused = true;
      waiting = this.sse.writeNamed('content_block_delta', {
        type: 'content_block_delta',
        index: this.textBlock('refusal'),
        delta: { type: 'text_delta', text: delta.refusal },
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
    if (finish) {
      this.finish = finish;
      this.closeBlock();
    }
    return waiting;
  }

  /** The open block's last events, `message_delta` (stop reason, usage, `bulkhead`) and `message_stop`. */
  protected closingEvents(): string {
    this.closeBlock();
    const messageDelta = this.nativeDelta ? this.nativeMessageDelta(this.nativeDelta) : this.messageDelta();
    if (this.bulkhead !== undefined) messageDelta.bulkhead = this.bulkhead;
    return (
      `event: message_delta\ndata: ${JSON.stringify(messageDelta)}\n\n` +
      `event: message_stop\ndata: ${JSON.stringify({ type: 'message_stop' })}\n\n`
    );
  }

  private messageDelta(): AnthropicStreamEvent {
    return {
      type: 'message_delta',
      delta: { stop_reason: answerStopReason(this.finish, this.refused), stop_sequence: null },
      usage: messagesUsage(this.usage),
    };
  }

  /** The provider's own `message_delta`, its usage the one it was charged for (the usage chunk's). */
  private nativeMessageDelta(delta: AnthropicStreamEvent): AnthropicStreamEvent {
    return this.usage ? { ...delta, usage: nativeUsage(delta.usage, this.usage) } : { ...delta };
  }

  /** The index of the open text block of `kind`, starting one (and stopping the one before) if needed. */
  private textBlock(kind: 'text' | 'refusal'): number {
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
