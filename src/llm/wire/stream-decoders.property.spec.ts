import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import fc from 'fast-check';
import { cutBytes } from '../../../test/support/byte-cuts';
import { hostileJsonText } from '../../../test/support/hostile-json';
import { EventStreamFrameError, eventStreamMessages } from './bedrock';
import { SseDecoder, SseEventTooLarge, type SseEvent } from './sse';

/**
 * The two byte-level decoders of provider streams (SSE, and AWS's binary event stream) against
 * arbitrary bytes cut at arbitrary places: the same events whatever the cuts, and no failure but
 * their own typed one.
 */

/** The events of `pieces`, or the decoder's own failure; anything else thrown fails the property. */
function sseEventsOf(pieces: Buffer[]): SseEvent[] | 'too large' {
  const decoder = new SseDecoder();
  const events: SseEvent[] = [];
  try {
    for (const piece of pieces) events.push(...decoder.read(piece));
  } catch (error) {
    if (error instanceof SseEventTooLarge) return 'too large';
    throw error;
  }
  return events;
}

const sseLine = fc.oneof(
  hostileJsonText.map((json) => `data: ${json}`),
  fc.constantFrom('data: [DONE]', 'event: x', ': comment', 'id: 1', 'retry: 5', 'data', ''),
  fc.string({ maxLength: 12 }),
);
const sseText = fc
  .array(fc.tuple(sseLine, fc.constantFrom('\n', '\r\n', '\r', '\n\n')), { maxLength: 12 })
  .map((lines) => lines.map(([line, end]) => line + end).join(''));
const places = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 });

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const header = (value: string) => ({ type: 'string' as const, value });
/** An event-stream message as Bedrock frames one, its payload anything. */
const frame = fc
  .tuple(fc.constantFrom('event', 'exception', 'error', 'other'), fc.constantFrom('chunk', 'x'), hostileJsonText)
  .map(([type, event, payload]) =>
    Buffer.from(
      codec.encode({
        headers: { ':message-type': header(type), ':event-type': header(event) },
        body: fromUtf8(JSON.stringify({ bytes: Buffer.from(payload).toString('base64') })),
      }),
    ),
  );
/** Frames, some of them with a byte flipped, or plain garbage between them. */
const eventStreamBytes = fc
  .array(
    fc.oneof(
      { arbitrary: frame, weight: 4 },
      {
        arbitrary: fc
          .tuple(frame, fc.nat(), fc.integer({ min: 1, max: 255 }))
          .map(([bytes, at, flip]) => flipped(bytes, at, flip)),
        weight: 1,
      },
      { arbitrary: fc.uint8Array({ maxLength: 24 }).map((bytes) => Buffer.from(bytes)), weight: 1 },
    ),
    { maxLength: 6 },
  )
  .map((frames) => Buffer.concat(frames));

function flipped(bytes: Buffer, at: number, flip: number): Buffer {
  const copy = Buffer.from(bytes);
  copy[at % copy.length] ^= flip;
  return copy;
}

async function* each(pieces: Buffer[]): AsyncGenerator<Buffer> {
  yield* pieces;
}

/** The messages' bodies as text, or the decoder's own failure; anything else thrown fails the property. */
async function messagesOf(pieces: Buffer[]): Promise<string[] | 'not an event stream'> {
  const bodies: string[] = [];
  try {
    for await (const message of eventStreamMessages(each(pieces))) bodies.push(toUtf8(message.body));
  } catch (error) {
    if (error instanceof EventStreamFrameError) return 'not an event stream';
    throw error;
  }
  return bodies;
}

describe('the provider stream decoders, fuzzed', () => {
  it('SSE: the same events however the bytes are cut, and no failure but an event too large', () => {
    fc.assert(
      fc.property(sseText, places, (text, at) => {
        const bytes = Buffer.from(text, 'utf8');
        expect(sseEventsOf(cutBytes(bytes, at))).toEqual(sseEventsOf([bytes]));
      }),
      { numRuns: 2000 },
    );
  });

  it('event stream: the same messages however the bytes are cut, and no failure but its own', async () => {
    await fc.assert(
      fc.asyncProperty(eventStreamBytes, places, async (bytes, at) => {
        expect(await messagesOf(cutBytes(bytes, at))).toEqual(await messagesOf([bytes]));
      }),
      { numRuns: 1000 },
    );
  });
});
