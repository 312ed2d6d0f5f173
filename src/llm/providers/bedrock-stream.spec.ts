import { Readable } from 'node:stream';
import { EventStreamCodec, type Message, type MessageHeaders } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { FakeClock } from '../../common/fake-clock';
import { noNetwork, providerAttempt } from '../../../test/support/provider-attempt';
import { rejection } from '../../../test/support/rejection';
import { EventStreamFrameError, eventStreamMessages, MAX_EVENT_STREAM_MESSAGE_BYTES } from '../wire';
import { bedrockEvents } from './bedrock-stream';
import type { ProviderTarget } from './llm-provider';

const clock = new FakeClock(Date.UTC(2026, 4, 1, 12, 0, 0));
const target: ProviderTarget = {
  provider: 'bedrock',
  model: 'anthropic.claude-3-5-haiku-20241022-v1:0',
  region: 'eu-west-3',
};
const codec = new EventStreamCodec(toUtf8, fromUtf8);

const text = (value: string) => ({ type: 'string' as const, value });

function frame(headers: MessageHeaders, body: string | Uint8Array = ''): Buffer {
  return Buffer.from(codec.encode({ headers, body: typeof body === 'string' ? fromUtf8(body) : body }));
}

/** A `chunk` event carrying one Anthropic stream event, as Bedrock sends it. */
function chunkFrame(event: unknown): Buffer {
  const bytes = Buffer.from(JSON.stringify(event)).toString('base64');
  return frame(
    { ':message-type': text('event'), ':event-type': text('chunk'), ':content-type': text('application/json') },
    JSON.stringify({ bytes }),
  );
}

function exceptionFrame(type: string): Buffer {
  return frame(
    { ':message-type': text('exception'), ':exception-type': text(type), ':content-type': text('application/json') },
    JSON.stringify({ message: 'secret detail of the failure' }),
  );
}

/** Each byte of `bytes` as its own chunk: every message cut everywhere it can be. */
function byteByByte(bytes: Buffer): Buffer[] {
  return [...bytes].map((byte) => Buffer.from([byte]));
}

async function messages(chunks: Buffer[]): Promise<Message[]> {
  const all: Message[] = [];
  for await (const message of eventStreamMessages(Readable.from(chunks))) all.push(message);
  return all;
}

function attempt() {
  return providerAttempt(
    target,
    { model: target.model, messages: [{ role: 'user', content: 'Hi' }] },
    { http: noNetwork },
  );
}

async function events(body: Readable, stream = attempt()): Promise<unknown[]> {
  const all: unknown[] = [];
  for await (const event of bedrockEvents(stream, body, clock)) all.push(event);
  return all;
}

const PING = { type: 'ping' };
const STOP = { type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 3, outputTokenCount: 1 } };

describe('eventStreamMessages', () => {
  const first = frame({ ':message-type': text('event'), ':event-type': text('chunk') }, '{"bytes":"e30="}');
  const second = frame({ ':message-type': text('event'), n: { type: 'integer', value: 7 } }, new Uint8Array([0, 1, 2]));

  it('decodes messages whole, however the chunks cut them', async () => {
    const both = Buffer.concat([first, second]);
    const cuts = [
      [both],
      byteByByte(both),
      [both.subarray(0, 5), both.subarray(5, first.length + 3), both.subarray(first.length + 3)],
    ];

    for (const chunks of cuts) {
      const decoded = await messages(chunks);

      expect(decoded).toHaveLength(2);
      expect(decoded[0].headers[':event-type']).toEqual(text('chunk'));
      expect(toUtf8(decoded[0].body)).toBe('{"bytes":"e30="}');
      expect(decoded[1].headers.n).toEqual({ type: 'integer', value: 7 });
      expect([...decoded[1].body]).toEqual([0, 1, 2]);
    }
  });

  it('takes a message of exactly the limit', async () => {
    // 16 bytes of prelude and checksum around the body, and no headers.
    const largest = frame({}, new Uint8Array(MAX_EVENT_STREAM_MESSAGE_BYTES - 16));

    const [decoded] = await messages([largest]);

    expect(largest.length).toBe(MAX_EVENT_STREAM_MESSAGE_BYTES);
    expect(decoded.body.length).toBe(MAX_EVENT_STREAM_MESSAGE_BYTES - 16);
  });

  it('refuses a message announcing more than the limit at its prelude, before reading it', async () => {
    const prelude = Buffer.alloc(12);
    prelude.writeUInt32BE(MAX_EVENT_STREAM_MESSAGE_BYTES + 1, 0);
    async function* body(): AsyncGenerator<Buffer> {
      yield prelude;
      throw new Error('read past the prelude');
    }

    const error = await rejection(
      (async () => {
        for await (const _message of eventStreamMessages(body()));
      })(),
    );

    expect(error).toBeInstanceOf(EventStreamFrameError);
    expect(error.message).toBe(
      `not an event stream message: a message is larger than ${MAX_EVENT_STREAM_MESSAGE_BYTES} bytes`,
    );
  });

  it.each([
    ['a length below the least message', Buffer.from([0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0])],
    ['a changed byte', Buffer.concat([first.subarray(0, 20), Buffer.from([first[20] ^ 1]), first.subarray(21)])],
  ])('refuses %s', async (_name, bytes) => {
    const error = await rejection(messages([bytes]));

    expect(error).toBeInstanceOf(EventStreamFrameError);
  });

  it('just ends with a body that ends inside a message', async () => {
    const decoded = await messages([first, second.subarray(0, second.length - 1)]);

    expect(decoded).toHaveLength(1);
  });
});

describe('bedrockEvents', () => {
  it("yields each chunk's Anthropic event, and nothing for event kinds it does not know", async () => {
    const body = Readable.from([
      Buffer.concat([
        chunkFrame(PING),
        frame({ ':message-type': text('event'), ':event-type': text('somethingNew') }, '{}'),
      ]),
      frame({ ':message-type': text('notice') }),
      chunkFrame(STOP),
    ]);

    expect(await events(body)).toEqual([PING, STOP]);
    expect(body.destroyed).toBe(true);
  });

  it.each([
    ['throttlingException', 'transient', 'rate_limited', 429],
    ['modelStreamErrorException', 'transient', 'upstream_error', 424],
    ['internalServerException', 'transient', 'upstream_error', 500],
    ['serviceUnavailableException', 'transient', 'overloaded', 503],
    ['modelTimeoutException', 'transient', 'upstream_timeout', 408],
    ['validationException', 'invalid_request', 'bad_request', 400],
    // Not a stream exception AWS documents, but one whose type the failure table knows.
    ['modelNotReadyException', 'transient', 'overloaded', 500],
    ['somethingNewException', 'transient', 'upstream_error', 500],
  ])('throws %s as %s / %s', async (type, kind, code, status) => {
    const error = await rejection(events(Readable.from([chunkFrame(PING), exceptionFrame(type)])));

    expect(error).toMatchObject({ kind, code, upstreamStatus: status });
    expect(error.message).toMatch(new RegExp(`^target bedrock/${target.model} answered ${status}: `));
    expect(error.message).not.toContain('secret detail');
  });

  it('throws an error message by its error code', async () => {
    const error = await rejection(
      events(
        Readable.from([
          frame({
            ':message-type': text('error'),
            ':error-code': text('InternalFailure'),
            ':error-message': text('detail'),
          }),
        ]),
      ),
    );

    expect(error).toMatchObject({ kind: 'transient', code: 'upstream_error' });
    expect(error.message).toContain('(InternalFailure)');
    expect(error.message).not.toContain('detail');
  });

  it.each([
    [
      'a payload that is not JSON',
      frame({ ':message-type': text('event'), ':event-type': text('chunk') }, '{"bytes":'),
    ],
    ['a payload without bytes', frame({ ':message-type': text('event'), ':event-type': text('chunk') }, '{"p":"abc"}')],
    [
      'bytes that are not JSON',
      frame(
        { ':message-type': text('event'), ':event-type': text('chunk') },
        JSON.stringify({ bytes: Buffer.from('{"type":').toString('base64') }),
      ),
    ],
    ['bytes that are not an event stream', Buffer.from('HTTP/1.1 200 OK\r\n\r\n{"type":"message_stop"}')],
  ])('throws bad_response for %s', async (_name, bytes) => {
    const error = await rejection(events(Readable.from([bytes])));

    expect(error).toMatchObject({ kind: 'transient', code: 'bad_response' });
  });

  it('throws a body that fails mid-way as transient, without what the error said', async () => {
    const body = new Readable({ read() {} });
    body.push(chunkFrame(PING));
    const reading = bedrockEvents(attempt(), body, clock);
    expect((await reading.next()).value).toEqual(PING);

    body.destroy(Object.assign(new Error('read ECONNRESET 10.1.2.3:443'), { code: 'ECONNRESET' }));

    const error = await rejection(reading.next());
    expect(error).toMatchObject({ kind: 'transient', code: 'unreachable' });
    expect(error.message).toBe(`target bedrock/${target.model} could not be reached (ECONNRESET)`);
  });

  it('throws the abort reason when the attempt was stopped mid-way', async () => {
    const stopped = attempt();
    const body = new Readable({ read() {} });
    body.push(chunkFrame(PING));
    const reading = bedrockEvents(stopped, body, clock);
    await reading.next();
    const reason = new Error('attempt timed out');

    stopped.abort.abort(reason);
    body.destroy(new Error('aborted'));

    await expect(reading.next()).rejects.toBe(reason);
  });

  it('destroys the body when its reader stops early', async () => {
    const body = Readable.from([chunkFrame(PING), chunkFrame(PING), chunkFrame(STOP)]);
    const reading = bedrockEvents(attempt(), body, clock);

    await reading.next();
    await reading.return(undefined);

    expect(body.destroyed).toBe(true);
  });
});
