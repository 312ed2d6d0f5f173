/** Options of one {@link Coalescer.run} call. */
export interface CoalesceOptions {
  /** This caller's client leaving: its own promise rejects with the signal's reason at once. */
  signal?: AbortSignal;
}

/** One caller's share of a run: whether it started the run or joined one, and the run's outcome. */
export interface Coalesced<T> {
  /**
   * True when this call started the run (its `work` is the one running); false when it joined a
   * run already in flight, or was refused at once (its signal had aborted) and started nothing.
   */
  readonly started: boolean;
  /** The run's outcome, for this caller (a copy of the value when it joined and a copy was asked for). */
  readonly outcome: Promise<T>;
}

/** Options of a {@link Coalescer}. */
export interface CoalescerOptions<T> {
  /**
   * What each caller after the first gets in place of the shared value, so that no two callers
   * hold one object (one that stamps its own id on an answer would change another's).
   * @default the value itself
   */
  copy?: (value: T) => T;
}

interface Flight<T> {
  readonly promise: Promise<T>;
  readonly controller: AbortController;
  /** Callers whose promise has not settled and whose signal has not aborted. */
  waiters: number;
}

/**
 * Single flight, per process: concurrent calls with one key share one run of `work`, so a herd
 * of identical misses costs one provider call. The first caller's `work` runs; every caller
 * with the same key while it is in flight gets its outcome, success or failure. The key is
 * forgotten as soon as the run settles, so the next call runs `work` afresh (by then the
 * answer is in the cache, if it could be stored).
 *
 * Key it by `exactCacheKey`: callers share an outcome only when they asked the same question
 * as the same tenant, and a failure (a 429 of the tenant's own quota) stays within the tenant.
 *
 * A caller whose client leaves (its `signal` aborts) stops waiting, and nothing else: the run
 * goes on for the others. The first caller is no different: its client leaving does not stop
 * the run either. `work` gets a signal of its own, which aborts only once every caller has
 * left (the key is then forgotten at once, so a newcomer starts a fresh run rather than join
 * one being abandoned); a caller without a signal never leaves. So `work` must not stop on the
 * first caller's own signal, which would end the run for everyone who joined it. Whether to
 * stop an upstream call when the last caller leaves, or let it finish to fill the cache, is
 * the route's choice: heed the signal, or not. Each call is told whether it started the run or
 * joined one ({@link Coalesced.started}), for a route that charges the run to its first caller.
 */
export class Coalescer<T> {
  private readonly flights = new Map<string, Flight<T>>();
  private readonly copy: ((value: T) => T) | undefined;

  constructor(options: CoalescerOptions<T> = {}) {
    this.copy = options.copy;
  }

  /**
   * `work`'s outcome for `key`: from a run already in flight under `key` (joined), or from a
   * new one (started). A caller whose signal has already aborted is refused at once, and starts
   * nothing.
   */
  run(key: string, work: (signal: AbortSignal) => Promise<T>, options: CoalesceOptions = {}): Coalesced<T> {
    const { signal } = options;
    if (signal?.aborted) return { started: false, outcome: Promise.reject(signal.reason) };
    const joined = this.flights.get(key);
    const flight = joined ?? this.start(key, work);
    flight.waiters++;
    const shared = joined && this.copy ? flight.promise.then(this.copy) : flight.promise;
    const outcome = signal ? this.waitFor(key, flight, shared, signal) : this.untilSettled(flight, shared);
    return { started: joined === undefined, outcome };
  }

  /** Callers waiting on the run in flight under `key` (its first caller included); 0 if none. */
  waiters(key: string): number {
    return this.flights.get(key)?.waiters ?? 0;
  }

  /** Keys with a run in flight. */
  get size(): number {
    return this.flights.size;
  }

  private start(key: string, work: (signal: AbortSignal) => Promise<T>): Flight<T> {
    const controller = new AbortController();
    let promise: Promise<T>;
    try {
      promise = Promise.resolve(work(controller.signal));
    } catch (error) {
      promise = Promise.reject(error);
    }
    const flight: Flight<T> = { promise, controller, waiters: 0 };
    this.flights.set(key, flight);
    // Registered before any caller's handler, so the key is forgotten before a caller resumes
    // (one that calls again with the key then starts a fresh run); it also handles a rejection
    // that every caller left before.
    const forget = () => {
      if (this.flights.get(key) === flight) this.flights.delete(key);
    };
    promise.then(forget, forget);
    return flight;
  }

  private untilSettled(flight: Flight<T>, shared: Promise<T>): Promise<T> {
    const leave = () => {
      flight.waiters--;
    };
    shared.then(leave, leave);
    return shared;
  }

  private waitFor(key: string, flight: Flight<T>, shared: Promise<T>, signal: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        flight.waiters--;
        reject(signal.reason);
        if (flight.waiters === 0) {
          if (this.flights.get(key) === flight) this.flights.delete(key);
          flight.controller.abort(signal.reason);
        }
      };
      signal.addEventListener('abort', onAbort, { once: true });
      shared.then(
        (value) => {
          if (signal.aborted) return;
          signal.removeEventListener('abort', onAbort);
          flight.waiters--;
          resolve(value);
        },
        (error: unknown) => {
          if (signal.aborted) return;
          signal.removeEventListener('abort', onAbort);
          flight.waiters--;
          reject(error);
        },
      );
    });
  }
}
