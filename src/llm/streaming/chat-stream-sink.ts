import type { ResilienceError } from '../../common';

/**
 * The client's end of a streamed answer. Nothing reaches the client before {@link open}: until
 * the commit point the request may still fail as a whole, with an ordinary error answer.
 */
export interface ChatStreamSink {
  /** Whether {@link open} was called: the status line is out, and errors go in the stream. */
  readonly opened: boolean;
  /** The commit: the status line and headers (with `headers` added) go out now. */
  open(headers: Record<string, string>): void;
  /**
   * Sends one event (a chunk, as JSON). Returns a promise when the client has not taken what was
   * sent before (backpressure), resolved once it has, or once it left; undefined otherwise.
   */
  write(event: object): Promise<void> | undefined;
  /**
   * Sends events already framed as Chat Completions' SSE (`data: <chunk JSON>\n\n` each), in one
   * write, at once; backpressure as {@link write}. Only a sink whose client reads those events
   * has it: the others take chunks.
   */
  writeFramed?(text: string): Promise<void> | undefined;
  /** `data: [DONE]` and the end of the response. */
  end(): void;
  /** `data: {"error": …}` and the end of the response, without `[DONE]`: the answer is not whole. */
  fail(error: ResilienceError): void;
  /** Drops the connection: for a client that stopped reading. */
  destroy(): void;
}
