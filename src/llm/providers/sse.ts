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
  constructor() {
    super(`a server-sent event is larger than ${MAX_SSE_EVENT_BYTES} bytes`);
    this.name = 'SseEventTooLarge';
  }
}

/**
 * The events of a `text/event-stream` body, as the WHATWG specification reads them: lines end
 * in CRLF, LF or CR; `data:` lines of one event are joined with LF; a blank line ends an event;
 * comments (`:`) and `id:`/`retry:` are ignored; a leading space after the colon is dropped; an
 * event without data is not dispatched; a last event the body ends without a blank line is
 * dropped, as a browser would. UTF-8 split across chunks is decoded whole.
 */
export async function* sseEvents(body: AsyncIterable<Buffer | Uint8Array | string>): AsyncGenerator<SseEvent> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let event = '';
  let data: string[] = [];
  let size = 0;
  // A CR at the very end of a chunk may be the first half of a CRLF split across chunks.
  let skipLeadingLf = false;
  for await (const piece of body) {
    let text = typeof piece === 'string' ? piece : decoder.write(piece as Buffer);
    // Nothing new (an empty read, or only part of a character): a CR before it still pairs with an LF after.
    if (text === '') continue;
    if (skipLeadingLf && text.startsWith('\n')) text = text.slice(1);
    skipLeadingLf = false;
    pending += text;
    let start = 0;
    for (;;) {
      const end = lineEnd(pending, start);
      if (end === -1) break;
      const line = pending.slice(start, end);
      let next = end + 1;
      if (pending.charCodeAt(end) === 13) {
        if (next < pending.length) {
          if (pending.charCodeAt(next) === 10) next++;
        } else {
          skipLeadingLf = true;
        }
      }
      start = next;
      if (line === '') {
        if (data.length > 0) yield { event: event || 'message', data: data.join('\n') };
        event = '';
        data = [];
        size = 0;
        continue;
      }
      size += line.length;
      if (size > MAX_SSE_EVENT_BYTES) throw new SseEventTooLarge();
      const colon = line.indexOf(':');
      if (colon === 0) continue;
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') data.push(value);
      else if (field === 'event') event = value;
    }
    pending = pending.slice(start);
    if (size + pending.length > MAX_SSE_EVENT_BYTES) throw new SseEventTooLarge();
  }
}

/** The index of the next CR or LF at or after `from`, or -1. */
function lineEnd(text: string, from: number): number {
  for (let index = from; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === 10 || code === 13) return index;
  }
  return -1;
}
