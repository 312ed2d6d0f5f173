import { rejection } from '../../../test/support/rejection';
import { MAX_SSE_EVENT_BYTES, type SseEvent, SseEventTooLarge, sseEvents } from './sse';

type Piece = Buffer | Uint8Array | string;

async function* from(pieces: readonly Piece[]): AsyncGenerator<Piece> {
  for (const piece of pieces) yield piece;
}

async function events(...pieces: Piece[]): Promise<SseEvent[]> {
  const read: SseEvent[] = [];
  for await (const event of sseEvents(from(pieces))) read.push(event);
  return read;
}

/** `text` cut into two pieces at every position, and into pieces of one byte each. */
function everySplit(text: string): Piece[][] {
  const bytes = Buffer.from(text, 'utf8');
  const splits: Piece[][] = [];
  for (let at = 0; at <= bytes.length; at++) splits.push([bytes.subarray(0, at), bytes.subarray(at)]);
  splits.push([...bytes].map((byte) => Buffer.from([byte])));
  return splits;
}

const message = (data: string): SseEvent => ({ event: 'message', data });

describe('sseEvents', () => {
  describe('line endings', () => {
    it.each([
      ['LF', '\n'],
      ['CRLF', '\r\n'],
      ['CR', '\r'],
    ])('ends lines and events at %s', async (_name, eol) => {
      const text = ['event: delta', 'data: one', 'data: two', '', 'data: three', '', ''].join(eol);

      expect(await events(text)).toEqual([{ event: 'delta', data: 'one\ntwo' }, message('three')]);
    });

    it('reads a CRLF split across two chunks as one line ending, not two', async () => {
      // Read as CR then a blank line, the LF would end the event before its second data line.
      expect(await events('data: a\r', '\ndata: b\r\n\r\n')).toEqual([message('a\nb')]);
    });

    it('reads a CRLF split by an empty chunk as one line ending', async () => {
      expect(await events('data: a\r', '', '\ndata: b\r\n\r\n')).toEqual([message('a\nb')]);
      expect(await events(Buffer.from('data: a\r'), Buffer.alloc(0), Buffer.from('\ndata: b\r\n\r\n'))).toEqual([
        message('a\nb'),
      ]);
    });

    it('reads the same events however a CRLF stream is cut into chunks', async () => {
      const text = 'event: delta\r\ndata: {"a":1}\r\ndata: x\r\n\r\n: ping\r\n\r\ndata: last\r\n\r\n';
      const whole = await events(text);
      expect(whole).toEqual([{ event: 'delta', data: '{"a":1}\nx' }, message('last')]);

      for (const pieces of everySplit(text)) expect(await events(...pieces)).toEqual(whole);
    });

    it('keeps a lone CR at the end of a chunk followed by another line as two lines', async () => {
      expect(await events('data: a\r', 'data: b\r\r')).toEqual([message('a\nb')]);
    });
  });

  describe('fields', () => {
    it('joins the data lines of one event with LF', async () => {
      expect(await events('data: first\ndata: second\ndata: third\n\n')).toEqual([message('first\nsecond\nthird')]);
    });

    it('reads a data line without a colon as empty data', async () => {
      expect(await events('data\ndata: x\n\n', 'data\n\n')).toEqual([message('\nx'), message('')]);
    });

    it('ignores comments, id, retry and unknown fields', async () => {
      const text = ': keep-alive\nid: 7\nretry: 3000\nfoo: bar\ndata: kept\n: another comment\n\n';

      expect(await events(text)).toEqual([message('kept')]);
    });

    it('dispatches nothing for a block of comments only', async () => {
      expect(await events(': ping\n\n: ping\n\ndata: x\n\n')).toEqual([message('x')]);
    });

    it("names an event by its event field, and the next one without it 'message' again", async () => {
      expect(await events('event: error\ndata: {}\n\ndata: plain\n\n')).toEqual([
        { event: 'error', data: '{}' },
        message('plain'),
      ]);
    });

    it('drops one leading space after the colon, and only one', async () => {
      expect(await events('data:tight\n\n', 'data:  two spaces\n\n', 'data: \n\n', 'event:  x\ndata: y\n\n')).toEqual([
        message('tight'),
        message(' two spaces'),
        message(''),
        { event: ' x', data: 'y' },
      ]);
    });

    it('keeps colons after the first as part of the value', async () => {
      expect(await events('data: {"url":"http://x"}\n\n')).toEqual([message('{"url":"http://x"}')]);
    });
  });

  describe('dispatch', () => {
    it('dispatches no event without data, and its name does not carry over', async () => {
      expect(await events('event: ping\n\n', 'event: ping\nid: 1\n\n', 'data: after\n\n')).toEqual([message('after')]);
    });

    it('drops a last event the body ends without a blank line', async () => {
      expect(await events('data: complete\n\ndata: partial\n')).toEqual([message('complete')]);
      expect(await events('data: complete\n\ndata: no line end')).toEqual([message('complete')]);
    });

    it('yields each event as soon as its blank line arrives, before the body ends', async () => {
      let pulled = 0;
      async function* source(): AsyncGenerator<string> {
        pulled++;
        yield 'data: first\n\n';
        pulled++;
        yield 'data: second\n\n';
      }
      const reading = sseEvents(source());

      expect((await reading.next()).value).toEqual(message('first'));
      expect(pulled).toBe(1);
      await reading.return(undefined);
    });
  });

  describe('UTF-8', () => {
    it('decodes multi-byte characters split across chunks whole', async () => {
      const text = 'data: héllo € 😀 日本\n\n';

      for (const pieces of everySplit(text)) expect(await events(...pieces)).toEqual([message('héllo € 😀 日本')]);
    });

    it('reads Uint8Array chunks as bytes', async () => {
      const bytes = new Uint8Array(Buffer.from('data: ünï\n\n', 'utf8'));

      expect(await events(bytes.subarray(0, 8), bytes.subarray(8))).toEqual([message('ünï')]);
    });
  });

  describe('size limit', () => {
    const LIMIT = MAX_SSE_EVENT_BYTES;

    it('accepts an event whose one line is exactly the limit', async () => {
      const line = `data: ${'x'.repeat(LIMIT - 'data: '.length)}`;

      const [event] = await events(line, '\n\n');

      expect(event.data).toHaveLength(LIMIT - 'data: '.length);
    });

    it('refuses an event whose one line is a byte over the limit', async () => {
      const line = `data: ${'x'.repeat(LIMIT - 'data: '.length + 1)}`;

      const error = await rejection(events(line, '\n\n'));

      expect(error).toBeInstanceOf(SseEventTooLarge);
      expect(error.message).toBe(`a server-sent event is larger than ${LIMIT} bytes`);
    });

    it('refuses a line that never ends as soon as it outgrows the limit, reading no further', async () => {
      const CHUNK = 256 * 1024;
      let pulled = 0;
      // A peer that sends one line forever: four chunks reach the limit exactly, the fifth passes it.
      async function* endless(): AsyncGenerator<string> {
        for (;;) {
          pulled++;
          yield pulled === 1 ? `data: ${'x'.repeat(CHUNK - 'data: '.length)}` : 'x'.repeat(CHUNK);
        }
      }

      const error = await rejection(
        (async () => {
          for await (const _event of sseEvents(endless())) throw new Error('no event expected');
        })(),
      );

      expect(error).toBeInstanceOf(SseEventTooLarge);
      expect(pulled).toBe(5);
    });

    it('counts every line of one event against the limit', async () => {
      const half = `data: ${'x'.repeat(LIMIT / 2 - 'data: '.length)}\n`;

      // Two lines of half the limit each: exactly the limit.
      const [event] = await events(half, half, '\n');
      expect(event.data).toHaveLength(LIMIT - 2 * 'data: '.length + 1);

      const error = await rejection(events(half, half, 'data: x\n\n'));
      expect(error).toBeInstanceOf(SseEventTooLarge);
    });

    it('counts comment lines of an event against the limit too', async () => {
      const comment = `:${'x'.repeat(LIMIT / 2)}\n`;

      const error = await rejection(events(comment, comment, 'data: x\n\n'));

      expect(error).toBeInstanceOf(SseEventTooLarge);
    });

    it('counts each event on its own: many large events are no larger one', async () => {
      const large = `data: ${'x'.repeat(LIMIT * 0.75)}\n\n`;

      const read = await events(large, large, large);

      expect(read).toHaveLength(3);
    });
  });
});
