/**
 * `subject` with every method answering a promise: a store whose methods may answer at once
 * (an `Awaitable`) seen as the contract suites assert on it, with `.resolves` and `.rejects`.
 * A synchronous throw becomes a rejection.
 */
export type Promised<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : T[K];
};

export function promised<T extends object>(subject: T): Promised<T> {
  return new Proxy(subject, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        try {
          return Promise.resolve((value as (...args: unknown[]) => unknown).apply(target, args));
        } catch (error) {
          return Promise.reject(error);
        }
      };
    },
  }) as Promised<T>;
}
