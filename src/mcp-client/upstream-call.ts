import type { AbortableRequestOptions, HttpStreamResponse } from '../containment';

/** What a `tools/call` needs of the attempt that makes it. */
export interface UpstreamCall {
  readonly callId: string;
  /** The attempt's cancellation: the SDK sends `notifications/cancelled` when it fires. */
  readonly signal: AbortSignal;
  /** A request through the call's pool, stopped with the attempt (`ctx.http.stream`). */
  stream(url: string, options: AbortableRequestOptions): Promise<HttpStreamResponse>;
  /** Longest wait for the answer's head, and between its chunks: the tool's timeout. */
  readonly timeoutMs: number;
  /** The most the answer may take, in bytes. */
  readonly maxResponseBytes: number;
  /** The call's idempotency key scoped to tenant and tool, sent in `_meta`; if it has one. */
  readonly idempotencyKey?: string;
  /** Where the upstream's progress notifications for this call go (the SDK asks for them with a `progressToken`). */
  readonly onProgress?: (update: { progress: number; total?: number; message?: string }) => void;
}

/** The answer of a `tools/call` ended (the connection closed, the stream ended) without its result. */
export class UpstreamAnswerEnded extends Error {
  constructor(cause?: unknown) {
    super('the upstream ended its answer before the result', { cause });
    this.name = 'UpstreamAnswerEnded';
  }
}

/** The answer of a request grew past its limit; the rest was not read. */
export class UpstreamAnswerTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`the upstream's answer is larger than ${limit} bytes`);
    this.name = 'UpstreamAnswerTooLarge';
  }
}
