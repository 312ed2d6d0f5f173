/**
 * What a lane needs of a caller's cancellation: to notice it while the call waits, and to
 * stop the work at shutdown. `LazyAbortController` (common/) is the one the service uses.
 */
export interface Abortable {
  readonly aborted: boolean;
  readonly reason: unknown;
  /** Calls `listener` on abort; returns a function that removes it. */
  onAbort(listener: (reason: unknown) => void): () => void;
  abort(reason: unknown): void;
}
