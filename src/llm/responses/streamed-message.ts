import type { MessageOutput, OutputContentPart } from '../wire';

/** Writes one typed event of a Responses stream (its sequence number added); the write's backpressure. */
export type EmitResponseEvent = (type: string, fields: object) => Promise<void> | undefined;

/**
 * The content parts of the message item a Responses stream is writing: the answer's text as an
 * `output_text` part, its refusal as a `refusal` part. Each part opens with
 * `response.content_part.added` (empty), grows by its deltas (`response.output_text.delta`,
 * `response.refusal.delta`) and closes with its done event (`response.output_text.done`,
 * `response.refusal.done`), then `response.content_part.done`: the events OpenAI streams a
 * message in. Text and refusal pieces that alternate are parts in the order they came, so the
 * item the client assembles is the one `response.completed` carries.
 */
export class StreamedMessage {
  /** The content index of the part still growing; undefined before the first piece and once closed. */
  private open: number | undefined;

  constructor(
    readonly item: MessageOutput,
    /** The item's index in the response's `output`. */
    readonly outputIndex: number,
    private readonly emit: EmitResponseEvent,
  ) {}

  /** `piece` appended to the part of its kind, opening one (and closing the other) if needed. */
  add(kind: OutputContentPart['type'], piece: string): Promise<void> | undefined {
    const contentIndex = this.partOf(kind);
    const part = this.item.content[contentIndex];
    const at = this.place(contentIndex);
    if (part.type === 'output_text') {
      part.text += piece;
      return this.emit('response.output_text.delta', { ...at, delta: piece, logprobs: [] });
    }
    part.refusal += piece;
    return this.emit('response.refusal.delta', { ...at, delta: piece });
  }

  /** The open part's done events; nothing when none is open. */
  close(): void {
    if (this.open === undefined) return;
    const contentIndex = this.open;
    this.open = undefined;
    const part = this.item.content[contentIndex];
    const at = this.place(contentIndex);
    if (part.type === 'output_text') this.emit('response.output_text.done', { ...at, text: part.text, logprobs: [] });
    else this.emit('response.refusal.done', { ...at, refusal: part.refusal });
    this.emit('response.content_part.done', { ...at, part });
  }

  private partOf(kind: OutputContentPart['type']): number {
    if (this.open !== undefined && this.item.content[this.open].type === kind) return this.open;
    this.close();
    const part: OutputContentPart =
      kind === 'output_text' ? { type: 'output_text', text: '', annotations: [] } : { type: 'refusal', refusal: '' };
    this.open = this.item.content.push(part) - 1;
    this.emit('response.content_part.added', { ...this.place(this.open), part: { ...part } });
    return this.open;
  }

  private place(contentIndex: number): { item_id: string; output_index: number; content_index: number } {
    return { item_id: this.item.id, output_index: this.outputIndex, content_index: contentIndex };
  }
}
