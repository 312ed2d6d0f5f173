import { EventStreamCodec, type Message } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';

/*
 * AWS's binary event stream (`application/vnd.amazon.eventstream`), as Bedrock's
 * InvokeModelWithResponseStream answers in it: framed, checksummed messages, each read whole and
 * bounded before it is buffered. The events inside are Anthropic's (../anthropic-messages).
 */

/**
 * The longest message of an event stream Bedrock may send. AWS allows 16 MiB; one chunk of a
 * streamed answer is a few hundred bytes, and 1 MiB holds a whole tool call's arguments in one,
 * as the SSE limit does.
 */
export const MAX_EVENT_STREAM_MESSAGE_BYTES = 1024 * 1024;

/** A message's prelude (total length, headers length, their CRC) and its own CRC: the least one can be. */
const MIN_MESSAGE_BYTES = 16;

/** Thrown for bytes that are not an event stream: the provider turns it into a malformed answer. */
export class EventStreamFrameError extends Error {
  constructor(reason: string) {
    super(`not an event stream message: ${reason}`);
    this.name = 'EventStreamFrameError';
  }
}

/**
 * The messages of an `application/vnd.amazon.eventstream` body, each decoded (and its CRCs
 * checked) by `@smithy/eventstream-codec` as soon as its last byte arrives, however the body's
 * chunks cut them. A message announcing more than {@link MAX_EVENT_STREAM_MESSAGE_BYTES} is
 * refused at its prelude, before it is buffered. A body that ends inside a message just ends:
 * the answer it carried is incomplete, which the reader of the events sees.
 */
export async function* eventStreamMessages(body: AsyncIterable<Buffer>): AsyncGenerator<Message> {
  const codec = new EventStreamCodec(toUtf8, fromUtf8);
  let pieces: Buffer[] = [];
  let buffered = 0;
  for await (const chunk of body) {
    pieces.push(chunk);
    buffered += chunk.length;
    while (buffered >= 4) {
      if (pieces[0].length < 4) pieces = [Buffer.concat(pieces)];
      const length = pieces[0].readUInt32BE(0);
      if (length < MIN_MESSAGE_BYTES) throw new EventStreamFrameError(`a message of ${length} bytes`);
      if (length > MAX_EVENT_STREAM_MESSAGE_BYTES) {
        throw new EventStreamFrameError(`a message is larger than ${MAX_EVENT_STREAM_MESSAGE_BYTES} bytes`);
      }
      if (buffered < length) break;
      // One copy per message at most: a chunk holding whole messages is only sliced.
      const all = pieces.length === 1 ? pieces[0] : Buffer.concat(pieces);
      const rest = all.subarray(length);
      pieces = rest.length > 0 ? [rest] : [];
      buffered = rest.length;
      yield decode(codec, all.subarray(0, length));
    }
  }
}

function decode(codec: EventStreamCodec, frame: Buffer): Message {
  try {
    return codec.decode(frame);
  } catch {
    // The codec's messages name checksums and lengths, nothing of the caller's.
    throw new EventStreamFrameError('its checksum or headers do not read');
  }
}
