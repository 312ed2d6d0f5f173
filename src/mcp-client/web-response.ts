import type { Readable } from 'node:stream';
import type { HttpStreamResponse } from '../containment';
import { UpstreamAnswerTooLarge } from './upstream-call';

/** Statuses whose `Response` may not have a body. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * A pool's streamed answer as the web `Response` the SDK's transport reads. The body is handed
 * over as it arrives (an event stream stays open for as long as the upstream writes it), and the
 * pool's permit goes when it ends or the SDK cancels it.
 */
export function toWebResponse(answer: HttpStreamResponse, limit?: number): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  if (NULL_BODY_STATUSES.has(answer.statusCode)) {
    answer.body.destroy();
    return new Response(null, { status: answer.statusCode, headers });
  }
  return new Response(webBody(answer.body, limit), { status: answer.statusCode, headers });
}

/**
 * The body as a web stream, read no faster than the SDK reads it; past `limit` bytes it fails
 * with {@link UpstreamAnswerTooLarge}.
 */
function webBody(body: Readable, limit: number | undefined): ReadableStream<Uint8Array> {
  let size = 0;
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      body.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (limit !== undefined && size > limit) {
          body.destroy(new UpstreamAnswerTooLarge(limit));
          return;
        }
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
        if ((controller.desiredSize ?? 1) <= 0) body.pause();
      });
      body.once('end', () => {
        // Cancelled first (the SDK read what it needed): there is nothing to close.
        if (!cancelled) controller.close();
      });
      body.once('error', (error) => controller.error(error));
    },
    pull() {
      body.resume();
    },
    cancel() {
      cancelled = true;
      body.destroy();
    },
  });
}
