import type { LazyAbortController } from '../common';

/** Where one tool attempt runs: what a wrapper is told of it. */
export interface WrappedAttempt {
  readonly callId: string;
  readonly lane: string;
  /** The attempt's own cancellation: its timeout, the call's abort. */
  readonly abort: LazyAbortController;
}

/** Something put around one tool's handler: it runs `handler` (or not) in the handler's place. */
export interface ToolAttemptWrapper {
  attempt(handler: () => unknown, where: WrappedAttempt): unknown;
}

/**
 * The seam around tools' attempts, for a module that wraps them from outside (ChaosModule
 * provides it, so the tools never import chaos). Without a provider, attempts run as they are.
 */
export abstract class ToolAttemptWrappers {
  /** Whether any tool's attempts are wrapped: only then does the attempt runner ask, per attempt. */
  abstract readonly touchesTools: boolean;

  /** The wrapper of a tool's attempts; undefined leaves them alone. */
  abstract forTool(toolId: string): ToolAttemptWrapper | undefined;
}
