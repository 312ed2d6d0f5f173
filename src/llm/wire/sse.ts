import { StringDecoder } from 'node:string_decoder';

/** One Server-Sent Event as read off the wire: `event:` (default `message`) and its joined `data:` lines. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * The longest event a provider may send. A chunk of a streamed answer is a few hundred bytes;
 * 1 MiB holds a whole tool call's arguments in one event, and stops a peer that never ends one.
 */
export const MAX_SSE_EVENT_BYTES = 1024 * 1024;

/** Thrown when an event outgrows {@link MAX_SSE_EVENT_BYTES}; the provider turns it into its kind. */
export class SseEventTooLarge extends Error {
  /** The events the same piece completed before the one too large: read before the failure. */
  before: SseEvent[] = [];

  constructor() {
    super(`a server-sent event is larger than ${MAX_SSE_EVENT_BYTES} bytes`);
    this.name = 'SseEventTooLarge';
  }
}

/**
 * Reads a `text/event-stream` body piece by piece, as the WHATWG specification reads it: lines
 * end in CRLF, LF or CR; `data:` lines of one event are joined with LF; a blank line ends an
 * event; comments (`:`) and `id:`/`retry:` are ignored; a leading space after the colon is
 * dropped; an event without data is not dispatched; a last event the body ends without a blank
 * line is dropped, as a browser would. UTF-8 split across pieces is decoded whole.
 *
 * {@link read} answers the events each piece completes, synchronously: a reader that handles
 * every event of one network read at once pays for one wait per read, not one per event.
 */
export class SseDecoder {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  private event = '';
  private data: string | undefined;
  private size = 0;
  /** A CR at the very end of a piece may be the first half of a CRLF split across pieces. */
  private skipLeadingLf = false;

  /**
   * The events `piece` completes, in order (often none, often several); throws
   * {@link SseEventTooLarge}, with the events completed before it.
   */
  read(piece: Buffer | Uint8Array | string): SseEvent[] {
    const events: SseEvent[] = [];
    try {
      this.readInto(piece, events);
    } catch (error) {
      if (error instanceof SseEventTooLarge) error.before = events;
      throw error;
    }
    return events;
  }

  private readInto(piece: Buffer | Uint8Array | string, events: SseEvent[]): void {
    let text = typeof piece === 'string' ? piece : this.decoder.write(piece as Buffer);
    // Nothing new (an empty read, or only part of a character): a CR before it still pairs with an LF after.
    if (text === '') return;
    if (this.skipLeadingLf && text.charCodeAt(0) === 10) text = text.slice(1);
    this.skipLeadingLf = false;
    const pending = this.pending === '' ? text : this.pending + text;
    // Providers end lines in LF: CRs are looked for only in a text that has one, and each once.
    let cr = pending.indexOf('\r');
    let start = 0;
    for (;;) {
      const lf = pending.indexOf('\n', start);
      if (cr !== -1 && cr < start) cr = pending.indexOf('\r', start);
      const end = cr !== -1 && (lf === -1 || cr < lf) ? cr : lf;
      if (end === -1) break;
      let next = end + 1;
      if (end === cr) {
        if (next < pending.length) {
          if (pending.charCodeAt(next) === 10) next++;
        } else {
          this.skipLeadingLf = true;
        }
      }
      this.line(pending, start, end, events);
      start = next;
    }
    this.pending = start === 0 ? pending : pending.slice(start);
    if (this.size + this.pending.length > MAX_SSE_EVENT_BYTES) throw new SseEventTooLarge();
  }

  /** The line `text[start, end)`, a blank one dispatching the event it ends into `events`. */
  private line(text: string, start: number, end: number, events: SseEvent[]): void {
    if (start === end) {
      if (this.data !== undefined) events.push({ event: this.event || 'message', data: this.data });
      this.event = '';
      this.data = undefined;
      this.size = 0;
      return;
    }
    this.size += end - start;
    if (this.size > MAX_SSE_EVENT_BYTES) throw new SseEventTooLarge();
    // A comment: nothing to read.
    if (text.charCodeAt(start) === 58) return;
    const colon = text.indexOf(':', start);
    const fieldEnd = colon === -1 || colon > end ? end : colon;
    let valueStart = fieldEnd === end ? end : fieldEnd + 1;
    if (valueStart < end && text.charCodeAt(valueStart) === 32) valueStart++;
    const length = fieldEnd - start;
    if (length === 4 && text.startsWith('data', start)) {
      const value = text.slice(valueStart, end);
      this.data = this.data === undefined ? value : `${this.data}\n${value}`;
    } else if (length === 5 && text.startsWith('event', start)) {
      this.event = text.slice(valueStart, end);
    }
  }
}

/** The events of a `text/event-stream` body, one at a time (see {@link SseDecoder}). */
export async function* sseEvents(body: AsyncIterable<Buffer | Uint8Array | string>): AsyncGenerator<SseEvent> {
  const decoder = new SseDecoder();
  for await (const piece of body) {
    let events: SseEvent[];
    try {
      events = decoder.read(piece);
    } catch (error) {
      if (error instanceof SseEventTooLarge) yield* error.before;
      throw error;
    }
    yield* events;
  }
}
