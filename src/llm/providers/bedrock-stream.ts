import type { Readable } from 'node:stream';
import type { Message } from '@smithy/eventstream-codec';
import { toUtf8 } from '@smithy/util-utf8';
import type { Clock } from '../../common';
import { EventStreamFrameError, eventStreamMessages } from '../wire';
import { isObject } from './json-shape';
import type { ProviderAttempt, ProviderTarget } from './llm-provider';
import { malformedAnswerError, type ProviderFailure, providerStatusError } from './provider-errors';
import { stoppedOr } from './provider-exchange';

/**
 * The Anthropic stream events (parsed JSON, as `anthropicChunks` reads them) of Bedrock's
 * InvokeModelWithResponseStream body: each `chunk` event's payload `{"bytes": base64}` decoded.
 * An exception message is thrown as {@link bedrockStreamException} says; the body failing
 * mid-way as the attempt's abort reason when it was stopped, else `transient`; bytes that are
 * not an event stream as a malformed answer. The body is destroyed when the reading ends,
 * however it ends, so a reader that stopped early lets the connection go at once.
 */
export async function* bedrockEvents(attempt: ProviderAttempt, body: Readable, clock: Clock): AsyncGenerator<unknown> {
  const { target } = attempt;
  try {
    for await (const message of eventStreamMessages(body)) {
      const event = anthropicEventOf(target, message, clock.wallNow());
      if (event !== undefined) yield event;
    }
  } catch (error) {
    if (error instanceof EventStreamFrameError) throw malformedAnswerError(target, 200);
    // Ours (an exception message, an unreadable chunk) and the pool's own errors go as they are.
    throw stoppedOr(attempt, error);
  } finally {
    body.destroy();
  }
}

/** The Anthropic event a message carries; undefined for a message of a kind Bedrock may add. */
function anthropicEventOf(target: ProviderTarget, message: Message, nowMs: number): unknown {
  const type = stringHeader(message, ':message-type');
  if (type === 'exception') {
    throw bedrockStreamException(target, stringHeader(message, ':exception-type') ?? '', nowMs);
  }
  if (type === 'error') throw bedrockStreamException(target, stringHeader(message, ':error-code') ?? '', nowMs);
  if (type !== 'event' || stringHeader(message, ':event-type') !== 'chunk') return undefined;
  try {
    const payload = JSON.parse(toUtf8(message.body)) as unknown;
    if (!isObject(payload) || typeof payload.bytes !== 'string') throw new Error('no bytes');
    return JSON.parse(Buffer.from(payload.bytes, 'base64').toString('utf8')) as unknown;
  } catch {
    throw malformedAnswerError(target, 200);
  }
}

function stringHeader(message: Message, name: string): string | undefined {
  const header = message.headers[name];
  return header?.type === 'string' ? header.value : undefined;
}

/**
 * The exceptions of InvokeModelWithResponseStream's stream, as the status and `x-amzn-errortype`
 * their InvokeModel answer would have had, so they read as that answer would
 * ({@link providerStatusError}). `modelStreamErrorException` (424: the model failed mid-way) has
 * its own entry in that table: 424 alone would read as a refusal, not a failure worth another try.
 */
const STREAM_EXCEPTIONS: ReadonlyMap<string, [number, string]> = new Map([
  ['internalServerException', [500, 'InternalServerException']],
  ['modelStreamErrorException', [424, 'ModelStreamErrorException']],
  ['modelTimeoutException', [408, 'ModelTimeoutException']],
  ['serviceUnavailableException', [503, 'ServiceUnavailableException']],
  ['throttlingException', [429, 'ThrottlingException']],
  ['validationException', [400, 'ValidationException']],
]);

/**
 * An exception Bedrock sent inside its stream (`:exception-type`, or an `error` message's
 * `:error-code`) as the failure its InvokeModel answer would be. Only the type is read, never the
 * payload's message. A type not in the table reads as a 500 under its own name (so the AWS
 * types `providerStatusError` knows, `ModelNotReadyException` say, still apply).
 *
 * @param nowMs epoch milliseconds, as {@link providerStatusError} takes them
 */
function bedrockStreamException(target: ProviderTarget, exceptionType: string, nowMs: number): ProviderFailure {
  const [status, errorType] = STREAM_EXCEPTIONS.get(exceptionType) ?? [500, upperFirst(exceptionType)];
  return providerStatusError(target, { status, headers: { 'x-amzn-errortype': errorType }, body: undefined }, nowMs);
}

function upperFirst(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}
