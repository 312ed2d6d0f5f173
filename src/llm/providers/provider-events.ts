import type { Readable } from 'node:stream';
import { SseDecoder, type SseEvent, SseEventTooLarge } from '../wire';
import type { ProviderAttempt } from './llm-provider';
import { malformedAnswerError } from './provider-errors';
import { stoppedOr } from './provider-exchange';

/**
 * The server-sent events of a streamed answer a read of the body at a time: the events each read
 * completes (a read that completes none is skipped), so that a reader waits once per read, not
 * once per event. The stream failing mid-way reads as the attempt's abort reason when it was
 * stopped, else `transient` (reset, the pool's idle timeout); an event past the size limit as a
 * malformed answer, after the events read before it.
 *
 * A reader that stops early (at `data: [DONE]`, or because the route moved on) lets the
 * connection go at once: the body is destroyed, unless all of it has already arrived. Such a
 * body is left to end by itself instead, as it would a tick later: destroying a body before its
 * `end` makes Node and undici build an abort error each (a stack trace captured, for every
 * stream that ends as it should), and cancels a request that is already over.
 */
export async function* providerEventBatches(attempt: ProviderAttempt, body: Readable): AsyncGenerator<SseEvent[]> {
  const decoder = new SseDecoder();
  try {
    // Not destroyed when the loop is left early: the `finally` below decides.
    for await (const piece of body.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      let events: SseEvent[];
      try {
        events = decoder.read(piece);
      } catch (error) {
        if (error instanceof SseEventTooLarge && error.before.length > 0) yield error.before;
        throw error;
      }
      if (events.length > 0) yield events;
    }
  } catch (error) {
    if (error instanceof SseEventTooLarge) throw malformedAnswerError(attempt.target, 200);
    throw stoppedOr(attempt, error);
  } finally {
    if (receivedWhole(body)) body.read();
    else body.destroy();
  }
}

/**
 * Whether every byte of `body` has arrived and been read, its `end` not emitted yet: reading it
 * once more then emits `end` on the next tick, and the pool's connection is free for the next
 * request. Node's Readable says so only in its state (`ended`: the source pushed its end).
 */
function receivedWhole(body: Readable): boolean {
  if (body.destroyed || body.readableEnded) return false;
  const state = (body as Readable & { _readableState?: { ended?: boolean } })._readableState;
  return state?.ended === true && body.readableLength === 0;
}
