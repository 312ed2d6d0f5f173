import { StringDecoder } from 'node:string_decoder';

const LF = 0x0a;
const COLON = 0x3a;
const SPACE = 0x20;

/**
 * The `message` events of an event stream, read as its bytes arrive in pieces of any size (the
 * HTML specification's parsing rules: lines end with CRLF, LF or CR; a blank line ends an event;
 * `data:` lines are joined with LF; `:` starts a comment; other fields are ignored). Each byte is
 * looked at once, however the stream is cut: a line split over many pieces is gathered, not
 * searched again, so an upstream that drips a long line byte by byte costs no more than one
 * that sends it whole. What is not a `message` event (another `event:` type, comments) is
 * dropped; an event without data is no event.
 */
export class EventStreamDecoder {
  private readonly utf8 = new StringDecoder('utf8');
  /** The start of a line whose end has not arrived. */
  private partial = '';
  private data: string | undefined;
  private type = '';
  /** The last piece ended with CR: an LF opening the next one ends no second line. */
  private afterCr = false;
  private started = false;

  /** The data of each `message` event that `chunk` completes, in order. */
  push(chunk: Buffer): string[] {
    let text = this.utf8.write(chunk);
    // Only part of a character: nothing to read yet (and a CR before it keeps its meaning).
    if (text.length === 0) return [];
    if (!this.started) {
      this.started = true;
      // A byte-order mark at the start is not part of the first line.
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    const events: string[] = [];
    let start = 0;
    if (this.afterCr && text.charCodeAt(0) === LF) start = 1;
    this.afterCr = false;
    // The next CR and LF at or after `start`, each searched for again only once passed: a
    // piece of many LF-ended lines and no CR is not searched to its end for a CR at every line.
    let cr = text.indexOf('\r', start);
    let lf = text.indexOf('\n', start);
    while (cr !== -1 || lf !== -1) {
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      const line = this.partial.length > 0 ? this.partial + text.slice(start, end) : text.slice(start, end);
      this.partial = '';
      this.line(line, events);
      start = end + 1;
      if (end === cr) {
        if (text.charCodeAt(start) === LF) start++;
        else if (start === text.length) this.afterCr = true;
      }
      if (cr !== -1 && cr < start) cr = text.indexOf('\r', start);
      if (lf !== -1 && lf < start) lf = text.indexOf('\n', start);
    }
    if (start < text.length) this.partial += text.slice(start);
    return events;
  }

  private line(line: string, events: string[]): void {
    if (line.length === 0) {
      if (this.data !== undefined && (this.type === '' || this.type === 'message')) events.push(this.data);
      this.data = undefined;
      this.type = '';
      return;
    }
    if (line.charCodeAt(0) === COLON) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === SPACE) value = value.slice(1);
    if (field === 'data') this.data = this.data === undefined ? value : `${this.data}\n${value}`;
    else if (field === 'event') this.type = value;
  }
}
