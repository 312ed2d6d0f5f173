/**
 * The baseline: the semaphore people write by hand, a count and an array of waiting resolvers
 * around async/await (the one docs/pitfalls.md #14 measured at 9.5 M/s uncontended).
 */
export class Semaphore {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => T | PromiseLike<T>): Promise<T> {
    if (this.active < this.limit) this.active++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await task();
    } finally {
      // The slot passes straight to the next waiter, so nobody can overtake it.
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}
