import type { Abortable } from '../bulkhead';

/** What a lane needs of an AbortSignal: a request whose caller left leaves the permit queue at once. */
export function signalAbortable(signal: AbortSignal): Abortable {
  return {
    get aborted() {
      return signal.aborted;
    },
    get reason() {
      return signal.reason as unknown;
    },
    onAbort(listener) {
      const onAbort = () => listener(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      return () => signal.removeEventListener('abort', onAbort);
    },
    // The caller owns its signal; a pool never aborts it.
    abort() {},
  };
}

/**
 * What undici accepts as a request's `signal` besides an AbortSignal (an EventEmitter with a
 * `reason`), over an {@link Abortable}: no AbortSignal is made for the request.
 *
 * It has no `aborted`: undici 8 takes any object with one for an AbortSignal and calls its
 * `addEventListener`. An attempt already aborted is heard at once instead, when undici adds its
 * listener (before it dispatches, so no connection is opened).
 */
export class UndiciSignal {
  private listening: Array<{ listener: () => void; stop: () => void }> | undefined;

  constructor(private readonly abort: Abortable) {}

  get reason(): unknown {
    return this.abort.reason;
  }

  on(event: 'abort', listener: () => void): void {
    this.once(event, listener);
  }

  /** An abort happens once, so every listener is a once listener. */
  once(_event: 'abort', listener: () => void): void {
    if (this.abort.aborted) {
      listener();
      return;
    }
    const stop = this.abort.onAbort(() => listener());
    (this.listening ??= []).push({ listener, stop });
  }

  removeListener(_event: 'abort', listener: () => void): void {
    const index = this.listening?.findIndex((item) => item.listener === listener) ?? -1;
    if (index === -1) return;
    this.listening![index].stop();
    this.listening!.splice(index, 1);
  }
}
