import type { IncomingMessage, ServerResponse } from 'node:http';
import { ResilienceError } from '../common';

/**
 * The Node request as the SDK's Web-standard transport reads it: its method, URL (`url`, the
 * path and query as the client sent them) and headers (the transport reads nothing else). Not a
 * real `Request`, which would also build an AbortSignal and a body stream nobody reads: about 4 %
 * of a call's CPU. The body is handed over parsed: the platform (Fastify or Express) read it,
 * with its size and depth limits; none (`null`) is read as empty.
 */
export function toWebRequest(request: IncomingMessage, url: string): Request {
  const headers = new Headers();
  const raw = request.rawHeaders;
  for (let index = 0; index < raw.length; index += 2) headers.append(raw[index], raw[index + 1]);
  // The origin is never read for routing (nothing here trusts the Host header): a fixed one.
  const head = { method: request.method, url: `http://bulkhead.local${url}`, headers, body: null };
  return head as unknown as Request;
}

/**
 * The transport's refusal (a status of 400 or more with a JSON-RPC error body) as the error
 * the envelope answers with: the transport's status, and its message, which names no caller
 * input but the protocol version it was sent (left out here).
 */
export async function refusalOf(response: Response): Promise<ResilienceError> {
  let message = 'the MCP request was refused';
  try {
    const body = (await response.json()) as { error?: { message?: unknown } };
    if (typeof body.error?.message === 'string') message = body.error.message;
  } catch {
    // No JSON body: the generic message.
  }
  if (/protocol version/i.test(message)) message = 'Bad Request: unsupported MCP-Protocol-Version';
  const { status } = response;
  if (status === 404) return new ResilienceError('not_found', message);
  if (status >= 500) return new ResilienceError('internal', 'internal error');
  return new ResilienceError('invalid_request', message, { status });
}

/**
 * Writes the transport's answer to the raw response: a JSON body at once, an event stream as
 * its events come (at the client's pace: a write that fills the socket waits for it to drain).
 * A client that leaves cancels the stream, which the transport then forgets.
 */
export async function writeWebResponse(response: Response, raw: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const streamed = headers['content-type']?.startsWith('text/event-stream') ?? false;
  if (!response.body || !streamed) {
    const text = response.body ? await response.text() : '';
    raw.writeHead(response.status, headers).end(text);
    return;
  }
  raw.writeHead(response.status, headers);
  // The head and the events already there leave in one write (a quick call's whole stream is
  // there by now). Otherwise the head goes at the next turn of the event loop on its own, as the
  // SDK's Node transport flushes it: Node sends a head with the first body byte, which for a
  // listening stream or a slow call is a keep-alive comment 15 s later.
  raw.cork();
  setImmediate(() => {
    if (!raw.destroyed && !raw.writableEnded) raw.flushHeaders();
    raw.uncork();
  });
  await pipeEvents(response.body, raw);
}

async function pipeEvents(body: ReadableStream<Uint8Array>, raw: ServerResponse): Promise<void> {
  const reader = body.getReader();
  const cancel = () => void reader.cancel().catch(() => undefined);
  raw.once('close', cancel);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || raw.destroyed) break;
      if (!raw.write(value)) await drained(raw);
    }
  } catch {
    // The stream was cancelled (the client left) or failed: nothing more to write.
  } finally {
    raw.off('close', cancel);
    if (!raw.destroyed) raw.end();
  }
}

/** Resolves when the response can take more, or has closed. */
function drained(raw: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      raw.off('drain', done);
      raw.off('close', done);
      resolve();
    };
    raw.once('drain', done);
    raw.once('close', done);
  });
}
