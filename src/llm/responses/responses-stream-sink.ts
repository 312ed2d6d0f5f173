import { type ResilienceError, toEnvelope } from '../../common';
import type { ChatChunk, ChatChunkChoice, FinishReason } from '../chat.types';
import type { SseReply } from '../streaming/sse-reply';
import { TranslatedStreamSink } from '../streaming/translated-stream-sink';
import type { FunctionCallOutput, MessageOutput, OutputItem } from '../wire';
import { responseObject, type ResponseIds, responseStatus, responsesUsage } from './chat-to-responses-answer';
import { NativeResponseStream } from './native-response-stream';
import type { ResolvedResponsesRequest } from './stored/response-references';
import { StreamedMessage } from './streamed-message';

/**
 * A streamed answer as the Responses API's typed events, from the chunks the pipeline streams:
 * `response.created` and `response.in_progress` with the first chunk; each output item as
 * `response.output_item.added`, its deltas (a message's text and refusal parts, see
 * {@link StreamedMessage}; `response.function_call_arguments.delta`), their `.done` events and
 * `response.output_item.done`; then `response.completed` (or `response.incomplete`) with the
 * whole response and its usage. A failure after the commit point is an `error` event.
 *
 * A native stream (an `openai` target that serves the Responses API sent the request as it came)
 * is passed on event by event as the target sent it, reasoning included, its ids made Bulkhead's
 * ({@link NativeResponseStream}); only its end waits, to carry the usage charged and the
 * `bulkhead` field.
 */
export class ResponsesStreamSink extends TranslatedStreamSink {
  private sequence = 0;
  private createdAt = 0;
  private model = '';
  private readonly output: OutputItem[] = [];
  /** The item being streamed now, its index in `output`, and its parts when it is the message. */
  private current: { item: OutputItem; index: number; message?: StreamedMessage } | undefined;
  /** A tool call's index in the chunks → its item. */
  private readonly calls = new Map<number, { item: FunctionCallOutput; index: number }>();
  private finish: FinishReason | null = null;
  /** Set by the first chunk of a native stream. */
  private native: NativeResponseStream | undefined;

  constructor(
    sse: SseReply,
    private readonly request: ResolvedResponsesRequest,
    private readonly ids: ResponseIds,
    private readonly labels: { callId?: string },
    /** Unix seconds: when the request came, for a stream that would have no chunk to say it. */
    private readonly requestedAt: number,
  ) {
    super(sse);
  }

  fail(error: ResilienceError): void {
    const { error: fields } = toEnvelope(error, { ...this.labels, openai: true });
    // OpenAI's error event (type, code, message, param), and the envelope under `error`, which
    // OpenAI's SDKs raise as their APIError.
    this.sse.finish(this.frame('error', { code: error.kind, message: error.message, param: null, error: fields }));
  }

  /** `response.created` and `response.in_progress`, from the first chunk's time and model. */
  protected begin(first: ChatChunk | undefined): Promise<void> | undefined {
    if (first?.passThroughEvent) {
      this.native = new NativeResponseStream(this.request, this.ids);
      return undefined;
    }
    this.createdAt = first?.created ?? this.requestedAt;
    this.model = first?.model ?? '';
    const response = responseObject(this.request, this.ids, {
      created_at: this.createdAt,
      model: this.model,
      output: [],
      usage: null,
      status: 'in_progress',
      incomplete_details: null,
    });
    this.emit('response.created', { response });
    return this.emit('response.in_progress', { response });
  }

  /** A native stream's chunks say nothing but their events: the finish and usage chunks are the books'. */
  protected override translateChunk(chunk: ChatChunk): Promise<void> | undefined {
    if (!this.native) return super.translateChunk(chunk);
    const passed = chunk.passThroughEvent && this.native.pass(chunk.passThroughEvent.event);
    return passed ? this.emit(passed.type, passed.fields) : undefined;
  }

  protected translate({ delta, finish_reason: finish }: ChatChunkChoice): Promise<void> | undefined {
    let waiting: Promise<void> | undefined;
    if (typeof delta.content === 'string' && delta.content.length > 0) {
      waiting = this.messageItem().add('output_text', delta.content);
    }
    if (typeof delta.refusal === 'string' && delta.refusal.length > 0) {
      waiting = this.messageItem().add('refusal', delta.refusal);
    }
    for (const part of delta.tool_calls ?? []) {
      let call = this.calls.get(part.index);
      if (!call) {
        const callId = part.id ?? `call_${this.ids.response}_${part.index}`;
        const item: FunctionCallOutput = {
          type: 'function_call',
          id: this.ids.functionCall(part.index),
          call_id: callId,
          name: part.function?.name ?? '',
          arguments: '',
          status: 'in_progress',
        };
        call = { item, index: this.addItem(item) };
        this.calls.set(part.index, call);
      }
      const piece = part.function?.arguments;
      if (piece) {
        call.item.arguments += piece;
        waiting = this.emit('response.function_call_arguments.delta', {
          item_id: call.item.id,
          output_index: call.index,
          delta: piece,
        });
      }
    }
    if (finish) {
      this.finish = finish;
      this.closeItem();
    }
    return waiting;
  }

  /** The open item's last events, then `response.completed` (or `.incomplete`) with the whole response. */
  protected closingEvents(): string {
    const nativeEnd = this.native?.end(this.usage, this.bulkhead);
    if (nativeEnd) return this.frame(nativeEnd.type, nativeEnd.fields);
    this.closeItem();
    const response = {
      ...responseObject(this.request, this.ids, {
        created_at: this.createdAt,
        model: this.model,
        output: this.output,
        usage: responsesUsage(this.usage),
        ...responseStatus(this.finish),
      }),
      ...(this.bulkhead !== undefined ? { bulkhead: this.bulkhead } : {}),
    };
    const type = response.status === 'incomplete' ? 'response.incomplete' : 'response.completed';
    return this.frame(type, { response });
  }

  /** The message item being streamed, started (and the item before it done) if needed. */
  private messageItem(): StreamedMessage {
    if (this.current?.message) return this.current.message;
    const item: MessageOutput = {
      type: 'message',
      id: this.ids.message(this.output.length),
      status: 'in_progress',
      role: 'assistant',
      content: [],
    };
    const index = this.addItem(item);
    const message = new StreamedMessage(item, index, (type, fields) => this.emit(type, fields));
    this.current = { item, index, message };
    return message;
  }

  private addItem(item: OutputItem): number {
    this.closeItem();
    const index = this.output.length;
    this.output.push(item);
    this.current = { item, index };
    this.emit('response.output_item.added', { output_index: index, item: { ...item } });
    return index;
  }

  private closeItem(): void {
    if (!this.current) return;
    const { item, index, message } = this.current;
    this.current = undefined;
    if (item.type === 'message') {
      message?.close();
    } else {
      this.emit('response.function_call_arguments.done', {
        item_id: item.id,
        output_index: index,
        arguments: item.arguments,
      });
    }
    item.status = 'completed';
    this.emit('response.output_item.done', { output_index: index, item });
  }

  private emit(type: string, fields: object): Promise<void> | undefined {
    return this.sse.writeNamed(type, { type, sequence_number: this.sequence++, ...fields });
  }

  private frame(type: string, fields: object): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.sequence++, ...fields })}\n\n`;
  }
}
