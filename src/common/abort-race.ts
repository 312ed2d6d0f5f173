import { LazyAbortController } from './lazy-abort-controller';
import { noop } from './noop';

/**
 * A cancellation to race against: a real AbortSignal, or a LazyAbortController, which is
 * listened to through `onAbort` so that no AbortSignal is made for it.
 */
export type AbortSource = AbortSignal | LazyAbortController;

/**
 * Rejects with the abort's reason, as it is, once `abort` fires (at once if it has); never
 * settles before. Work that never answers on its own, ended only by its abort.
 */
export function rejectOnAbort(abort: AbortSource): Promise<never> {
  return new Promise((_resolve, reject) => {
    onAbortOf(abort, reject);
  });
}

/**
 * `promise`, or the abort's reason, as it is, if `abort` fires first (at once if it has): a
 * caller who left stops waiting, while the work behind `promise` goes on. Stops listening to
 * `abort` once `promise` settles.
 */
export function raceWithAbort<T>(promise: Promise<T>, abort: AbortSource): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const detach = onAbortOf(abort, reject);
    promise.then(
      (value) => {
        detach();
        resolve(value);
      },
      (error: unknown) => {
        detach();
        reject(error);
      },
    );
  });
}

/** Calls `listener` with the reason once `abort` fires (at once if it has); returns its remover. */
function onAbortOf(abort: AbortSource, listener: (reason: unknown) => void): () => void {
  if (abort instanceof LazyAbortController) return abort.onAbort(listener);
  if (abort.aborted) {
    listener(abort.reason);
    return noop;
  }
  const onAbort = () => listener(abort.reason);
  abort.addEventListener('abort', onAbort, { once: true });
  return () => abort.removeEventListener('abort', onAbort);
}
