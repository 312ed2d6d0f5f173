import type { HttpStreamResponse } from '../containment';
import { EventStreamDecoder } from './event-stream-decoder';
import { UpstreamAnswerEnded, UpstreamAnswerTooLarge } from './upstream-call';

/**
 * Notifications handed to the client from one answer, at most; the rest are read and dropped.
 * Each costs the SDK a parse and a dispatch, and a server flooding one answer with them should
 * cost that answer's bytes, not the event loop's time ten thousand times over.
 */
const MAX_DELIVERED = 1_000;

/**
 * A `tools/call` answered with an event stream (what most MCP servers send), read here instead
 * of by the SDK: the SDK's reader pipes every answer through a text decoder stream and a parser
 * stream (web streams: four of them, and an error object, per call), which cost Bulkhead more
 * than the rest of the upstream call. Notifications before the result (progress, logging, a
 * changed tool list) go to the client as they come (`deliver`); the result is handed back as the
 * JSON answer the SDK also reads, as soon as it arrives. The body is read to its end, so its
 * connection stays reusable and the pool's permit is held until then. An answer that ends or
 * breaks before the result, or whose event is not JSON, fails with {@link UpstreamAnswerEnded}.
 * Only notifications are handed on (at most {@link MAX_DELIVERED}): Bulkhead declares no client
 * capability, so a server's request (each would cost a POST back through the pool) or a response
 * to another id has no business on a call's answer. Not kept: an event id to resume from (a
 * stream cut before the result is the call's failure, retried by its policy).
 */
export function eventStreamAnswer(
  answer: HttpStreamResponse,
  requestId: number,
  limit: number,
  deliver: (message: unknown) => void,
): Promise<Response> {
  const { body } = answer;
  return new Promise<Response>((resolve, reject) => {
    const events = new EventStreamDecoder();
    let size = 0;
    let delivered = 0;
    let answered = false;
    const onEvent = (data: string) => {
      // An event without data (a server's priming event, to resume from) carries no message;
      // after the result, nothing is read for the client any more.
      if (data.length === 0 || answered) return;
      let message: unknown;
      try {
        message = JSON.parse(data);
      } catch (error) {
        body.destroy(new UpstreamAnswerEnded(error));
        return;
      }
      if (isAnswerTo(message, requestId)) {
        answered = true;
        resolve(new Response(data, { status: 200, headers: { 'content-type': 'application/json' } }));
      } else if (isNotification(message) && delivered < MAX_DELIVERED) {
        delivered++;
        deliver(message);
      }
    };
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        body.destroy(new UpstreamAnswerTooLarge(limit));
        return;
      }
      for (const data of events.push(chunk)) onEvent(data);
    });
    body.once('end', () => {
      if (!answered) reject(new UpstreamAnswerEnded());
    });
    body.once('error', (error) => {
      if (!answered) reject(error instanceof UpstreamAnswerTooLarge ? error : new UpstreamAnswerEnded(error));
    });
  });
}

/** A JSON-RPC response (a result or an error) to the request `id`. */
function isAnswerTo(message: unknown, id: number): boolean {
  if (typeof message !== 'object' || message === null) return false;
  const fields = message as Record<string, unknown>;
  return fields.id === id && !('method' in fields) && ('result' in fields || 'error' in fields);
}

/** A JSON-RPC notification: a method and no id. */
function isNotification(message: unknown): boolean {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return false;
  const fields = message as Record<string, unknown>;
  return typeof fields.method === 'string' && !('id' in fields);
}
