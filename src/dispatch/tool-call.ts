import type { Lane, PriorityClass } from '../bulkhead';
import type { LazyAbortController } from '../common';
import type { PoolName } from '../containment';
import type { CallTransport } from '../events';
import type { HeaderSink } from '../rate-limit';
import type { ToolArguments, ToolDefinition, ToolProgress } from './tool';

/** One validated tool call, ready for the pipeline. */
export interface ToolCall {
  tool: ToolDefinition;
  arguments: ToolArguments;
  callId: string;
  tenant: string;
  /** The HTTP pool the containment snapshot gave this call (step 3, read once when it arrived). */
  pool: PoolName;
  /** The tenant is contained or unknown: a `containment: deny` tool refuses it. */
  contained: boolean;
  /** Aborted when the client disconnects or shutdown stops the call. */
  abort: LazyAbortController;
  /** Per-attempt timeout. */
  timeoutMs: number;
  queueTtlMs: number | undefined;
  /** The caller's `Idempotency-Key`, validated. */
  idempotencyKey?: string;
  /** Where the call's own response headers go (RateLimit); none for a batch entry. */
  headers?: HeaderSink;
  /** Its class in the lane (its caller's, within its ceiling). @default the tool's */
  priority?: PriorityClass;
  /** How the call arrived, a label of its metrics. @default 'http' */
  transport?: CallTransport;
  /**
   * Told once, when the call has to wait for a slot in its lane (never when it starts at once),
   * so its caller can say so while it waits; none on most calls, which then pay nothing.
   */
  onQueued?: (wait: QueueWait) => void;
  /** Where the work's own progress goes once it runs (an MCP caller's progress notifications); none on most calls. */
  onProgress?: (update: ToolProgress) => void;
}

/** A call that waits in its lane's queue, as {@link ToolCall.onQueued} sees it. */
export interface QueueWait {
  readonly lane: Lane;
  /** The longest it may wait, in milliseconds. */
  readonly queueTtlMs: number;
  /** Turns true when the call takes a slot. */
  readonly started: boolean;
}
