import { StringDecoder } from 'node:string_decoder';
import type { HttpStreamResponse } from '../containment';
import { UpstreamAnswerEnded, UpstreamAnswerTooLarge } from './upstream-call';

/** The blank line that ends an event (the specification's three line ends). */
const EVENT_END = /\r\n\r\n|\n\n|\r\r/;
const LINE_END = /\r\n|\n|\r/;

/**
 * A `tools/call` answered with an event stream (what most MCP servers send), read here instead
 * of by the SDK: the SDK's reader pipes every answer through a text decoder stream and a parser
 * stream (web streams: four of them, and an error object, per call), which cost Bulkhead more
 * than the rest of the upstream call. Messages before the result (progress, logging, a request
 * of the server) go to the client as they come (`deliver`); the result is handed back as the
 * JSON answer the SDK also reads, as soon as it arrives. The body is read to its end, so its
 * connection stays reusable and the pool's permit is held until then. An answer that ends or
 * breaks before the result fails with {@link UpstreamAnswerEnded}. Not kept: an event id to
 * resume from (a stream cut before the result is the call's failure, retried by its policy).
 */
export function eventStreamAnswer(
  answer: HttpStreamResponse,
  requestId: number,
  limit: number,
  deliver: (message: unknown) => void,
): Promise<Response> {
  const { body } = answer;
  return new Promise<Response>((resolve, reject) => {
    const decoder = new StringDecoder('utf8');
    let pending = '';
    let size = 0;
    let answered = false;
    const onEvent = (block: string) => {
      const data = dataOf(block);
      if (data === undefined) return;
      let message: unknown;
      try {
        message = JSON.parse(data);
      } catch (error) {
        body.destroy(new UpstreamAnswerEnded(error));
        return;
      }
      if (!answered && isAnswerTo(message, requestId)) {
        answered = true;
        resolve(new Response(data, { status: 200, headers: { 'content-type': 'application/json' } }));
      } else {
        deliver(message);
      }
    };
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        body.destroy(new UpstreamAnswerTooLarge(limit));
        return;
      }
      pending += decoder.write(chunk);
      for (let end = EVENT_END.exec(pending); end; end = EVENT_END.exec(pending)) {
        onEvent(pending.slice(0, end.index));
        pending = pending.slice(end.index + end[0].length);
      }
    });
    body.once('end', () => {
      if (!answered) reject(new UpstreamAnswerEnded());
    });
    body.once('error', (error) => {
      if (!answered) reject(error instanceof UpstreamAnswerTooLarge ? error : new UpstreamAnswerEnded(error));
    });
  });
}

/** The data of an event of type `message` (the default), its lines joined; undefined for others and comments. */
function dataOf(block: string): string | undefined {
  let data: string | undefined;
  for (const line of block.split(LINE_END)) {
    if (line.startsWith('data:')) {
      const value = line.charCodeAt(5) === 0x20 ? line.slice(6) : line.slice(5);
      data = data === undefined ? value : `${data}\n${value}`;
    } else if (line.startsWith('event:') && line.slice(6).trim() !== 'message') {
      return undefined;
    }
  }
  return data;
}

/** A JSON-RPC response (a result or an error) to the request `id`. */
function isAnswerTo(message: unknown, id: number): boolean {
  if (typeof message !== 'object' || message === null) return false;
  const fields = message as Record<string, unknown>;
  return fields.id === id && !('method' in fields) && ('result' in fields || 'error' in fields);
}
