export { type Deferred, deferred } from '../../src/common/deferred';

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
