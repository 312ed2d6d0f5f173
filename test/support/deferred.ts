/** A promise with its resolve and reject in hand, to drive concurrency by hand in tests. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** What a promise has become so far, without waiting for it. */
export function track<T>(promise: Promise<T>): {
  state: 'pending' | 'fulfilled' | 'rejected';
  value?: T;
  reason?: unknown;
} {
  const result: { state: 'pending' | 'fulfilled' | 'rejected'; value?: T; reason?: unknown } = { state: 'pending' };
  promise.then(
    (value) => Object.assign(result, { state: 'fulfilled', value }),
    (reason: unknown) => Object.assign(result, { state: 'rejected', reason }),
  );
  return result;
}
