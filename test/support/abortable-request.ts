import { Agent } from 'undici';
import { type Response, send, type SendOptions } from './http-client';

export interface AbortableRequest {
  /** Settles once: with the answer, or with the client-side error after `abort()`. */
  settled: Promise<{ answer?: Response; error?: unknown }>;
  /** Drops the connection, as a client that goes away does. */
  abort(): Promise<void>;
  /** Closes the request's own connection pool; call it in clean-up. */
  dispose(): Promise<void>;
}

/**
 * A request on its own undici Agent whose client can go away. After an abort undici
 * reconnects in the background; on a shared pool that idle socket would keep the test
 * app's `close()` waiting for undici's keep-alive timeout, so each request gets a pool that
 * is destroyed with it.
 */
export function abortableRequest(method: string, url: string, options: SendOptions = {}): AbortableRequest {
  const agent = new Agent();
  const controller = new AbortController();
  const settled = send(method, url, { ...options, signal: controller.signal, dispatcher: agent }).then(
    (answer) => ({ answer }),
    (error: unknown) => ({ error }),
  );
  const dispose = async () => {
    if (!agent.destroyed) await agent.destroy();
  };
  return {
    settled,
    abort: async () => {
      controller.abort();
      await settled;
      await dispose();
    },
    dispose,
  };
}
