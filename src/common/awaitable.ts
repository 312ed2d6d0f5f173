/**
 * A value now, or a promise of it. The store interfaces on every call's path answer with one:
 * the memory stores decide at once, and a call through them then waits for nothing (each
 * promise and `await` on the path costs a microtask and an allocation); the Redis stores
 * answer with a promise.
 */
export type Awaitable<T> = T | PromiseLike<T>;

export function isPromiseLike<T>(value: Awaitable<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}
