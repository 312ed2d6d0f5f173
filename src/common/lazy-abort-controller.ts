import { noop } from './noop';

type AbortListener = (reason: unknown) => void;

/**
 * An AbortController that creates its AbortSignal only when somebody asks for it.
 *
 * Every call gets one of these, but most never need a real signal: on Node 20 creating an
 * AbortSignal and adding its first listener cost about 3 µs, as much as the rest of the call
 * path (on Node 22 it is nearer 0.2 µs, so this saving is now small). Mechanisms (lanes, attempts) listen through {@link onAbort}, a plain array; only a
 * handler that touches {@link signal} (an HTTP tool handing it to undici) pays for the signal.
 */
export class LazyAbortController {
  private abortedFlag = false;
  private abortReason: unknown = undefined;
  private controller: AbortController | undefined;
  private listeners: AbortListener[] | undefined;

  get aborted(): boolean {
    return this.abortedFlag;
  }

  /** Why it was aborted; `undefined` until then. */
  get reason(): unknown {
    return this.abortReason;
  }

  /** A real AbortSignal that follows this controller; created on first use. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortedFlag) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  /** Aborts once; later calls do nothing. Listeners run synchronously, in the order added. */
  abort(reason: unknown): void {
    if (this.abortedFlag) return;
    this.abortedFlag = true;
    this.abortReason = reason;
    this.controller?.abort(reason);
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners) for (const listener of listeners) listener(reason);
  }

  /**
   * Calls `listener` when this aborts (at once if it already has). Returns a function that
   * removes it; removing is O(listeners), and a call rarely has more than two.
   */
  onAbort(listener: AbortListener): () => void {
    if (this.abortedFlag) {
      listener(this.abortReason);
      return noop;
    }
    (this.listeners ??= []).push(listener);
    return () => this.removeListener(listener);
  }

  private removeListener(listener: AbortListener): void {
    const index = this.listeners?.indexOf(listener) ?? -1;
    if (index !== -1) this.listeners!.splice(index, 1);
  }
}
