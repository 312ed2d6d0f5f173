import fc from 'fast-check';
import { cutBytes } from '../../test/support/byte-cuts';
import { EventStreamDecoder } from './event-stream-decoder';

/**
 * The reference reading: the whole stream at once, cut into lines with one regular expression,
 * by the same rules the specification gives (independent of how the decoder cuts and scans).
 */
function referenceEvents(whole: string): string[] {
  const text = whole.charCodeAt(0) === 0xfeff ? whole.slice(1) : whole;
  const lines = text.split(/\r\n|\r|\n/);
  lines.pop(); // the last line has not ended
  const events: string[] = [];
  let data: string[] | undefined;
  let type = '';
  for (const line of lines) {
    if (line === '') {
      if (data !== undefined && (type === '' || type === 'message')) events.push(data.join('\n'));
      data = undefined;
      type = '';
      continue;
    }
    if (line.startsWith(':')) continue;
    const colon = line.includes(':') ? line.indexOf(':') : line.length;
    const field = line.slice(0, colon);
    const value = line.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') (data ??= []).push(value);
    else if (field === 'event') type = value;
  }
  return events;
}

/** Lines of an event stream, made of what upstreams send and what they should not. */
const lineOf = fc.oneof(
  fc.constant(''),
  fc.constant('data:'),
  fc.constant('event: message'),
  fc.constant('event: other'),
  fc.constant(': keepalive'),
  fc.constant('id: 7'),
  fc.constant('retry: 100'),
  fc.json().map((json) => `data: ${json}`),
  fc.string({ unit: 'binary' }).map((text) => `data:${text.replace(/[\r\n]/g, '')}`),
  fc.string({ unit: 'binary' }).map((text) => text.replace(/[\r\n]/g, '')),
);
const endOf = fc.constantFrom('\n', '\r', '\r\n');
const streamOf = fc
  .array(fc.tuple(lineOf, endOf), { maxLength: 40 })
  .chain((lines) =>
    fc.tuple(
      fc.constant(lines.map(([line, end]) => line + end).join('')),
      fc.boolean(),
      fc.string({ unit: 'binary', maxLength: 8 }),
    ),
  )
  .map(([text, bom, tail]) => `${bom ? '\ufeff' : ''}${text}${tail}`);

describe('EventStreamDecoder (property)', () => {
  it('reads the same events however the bytes are cut, as the whole stream read at once', () => {
    fc.assert(
      fc.property(streamOf, fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 20 }), (text, cuts) => {
        const decoder = new EventStreamDecoder();
        const events = cutBytes(Buffer.from(text), cuts).flatMap((piece) => decoder.push(piece));

        expect(events).toEqual(referenceEvents(text));
      }),
      { numRuns: 2_000 },
    );
  });

  it('never throws on arbitrary bytes, one at a time or all at once', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const whole = new EventStreamDecoder().push(Buffer.from(bytes));
        const decoder = new EventStreamDecoder();
        const oneByOne = [...bytes].flatMap((byte) => decoder.push(Buffer.from([byte])));

        expect(oneByOne).toEqual(whole);
      }),
      { numRuns: 1_000 },
    );
  });

  it('reads a line dripped byte by byte in time proportional to its length', () => {
    // 200,000 single bytes of one line: searching the gathered line again at each byte would
    // look at 2e10 characters; reading each byte once looks at 2e5.
    const decoder = new EventStreamDecoder();
    const byte = Buffer.from('x');
    decoder.push(Buffer.from('data: '));
    let early = 0;
    for (let index = 0; index < 200_000; index++) early += decoder.push(byte).length;

    expect(early).toBe(0);
    expect(decoder.push(Buffer.from('\n\n'))).toEqual(['x'.repeat(200_000)]);
  });
});
