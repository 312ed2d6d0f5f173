import { EventEmitter } from 'node:events';
import CircuitBreaker from 'opossum';
import type { Attempt, BreakerEngine, EngineListener, RejectionVerdict } from './breaker-engine';
import type { RollingWindow } from './rolling-window';

// The only file that imports opossum: the breaker's engine (BreakerEngine) on an opossum circuit.

export type { Attempt } from './breaker-engine';

/** The opossum circuit inside a Breaker. */
export type OpossumCircuit = CircuitBreaker<[Attempt], unknown>;

// Every place the breaker relies on opossum 9 beyond its documented API, each with the
// assumption it makes about node_modules/opossum/lib/circuit.js. opossum-engine.spec.ts
// checks each one, numbered as here, on a bare opossum circuit: on an opossum upgrade, a
// failing test there names the assumption that no longer holds. (The rolling window's own
// reliance on opossum's Status class is rolling-window.ts's, checked by its spec.)
//
// 1. `fire` runs the action synchronously, before it returns. AttemptRace.launch reads what
//    its action set right after `fire` (src/llm/routing/attempt-race.ts). Nothing here to call.
// 2. The circuit asks a plain `semaphore` property (`test()`, `release()`) before each call.
// 3. Its constructor adds exactly one `success` listener that closes a half-open circuit.
// 4. Half open, the private `Symbol('pending-close')` true means the probe slot is free: `fire`
//    admits a call while it is true and sets it false when it takes the probe. The breaker
//    decides who probes; the engine sets it before each call fired half open.
// 5. A rejected action goes to `errorFilter(error, ...args)`; when that answers true, the circuit
//    emits `success` at once (synchronously), its status counting it before later listeners run.
// 6. A counted failure is emitted as `failure` with the fired arguments third, once the status
//    counted it and before the circuit reads the status to decide whether to open.
// 7. Each time it opens, the reset timer waits `options.resetTimeout` as it is then: a change
//    made before `open()` (or before the failure that opens it) holds for that opening.
// 8. opossum takes a `status` option only if it is an instance of its Status class, which the
//    package exports as a type only (`newStatus()` makes one); it reports every event to the
//    status's `increment`, reads `stats` to decide, and calls `close()` on it when it closes.

const SEMAPHORE = 'semaphore';
const PENDING_CLOSE = 'pending-close';

/** The part of opossum's semaphore its circuit uses. */
interface OpossumSemaphore {
  test(): boolean;
  release(): void;
}

/**
 * Admits every call and makes nothing. opossum's own semaphore, with no capacity, admits every
 * call too, but takes each slot through `Promise.resolve()`: one promise per call, about a
 * tenth of what a call through opossum allocates and of its time (bench/breaker.ts).
 */
const UNBOUNDED: OpossumSemaphore = Object.freeze({ test: () => true, release: () => undefined });

/** opossum's private symbol for a free half-open probe slot, found on the first circuit taken over. */
let pendingClose: symbol | undefined;

function broken(assumption: number, what: string): Error {
  return new Error(
    `opossum is not as src/circuit-breaker/opossum-engine.ts assumes (assumption ${assumption}): ${what}`,
  );
}

/**
 * Prepares a new circuit for the breaker, once, before it is used; throws, naming the
 * assumption, when this opossum is not what it expects:
 * - no concurrency bound (assumption 2): lanes bound it, and opossum's semaphore costs a promise a call;
 * - no closing of its own (assumption 3): the breaker closes a half-open circuit itself, on an
 *   outcome that is not `stopped`, in a `success` listener of its own;
 * - the probe slot's symbol is found (assumption 4), for {@link freeProbeSlot};
 * - its open time is an option it reads on each opening (assumption 7), for {@link setOpenTime}.
 */
export function takeOver(circuit: OpossumCircuit): void {
  if (!Object.prototype.hasOwnProperty.call(circuit, SEMAPHORE)) {
    throw broken(2, `the circuit has no own '${SEMAPHORE}' property`);
  }
  (circuit as unknown as Record<string, OpossumSemaphore>)[SEMAPHORE] = UNBOUNDED;

  const closers = circuit
    .listeners('success')
    .filter((listener) => /\.close\(\)/.test(Function.prototype.toString.call(listener)));
  if (closers.length !== 1) {
    throw broken(3, `expected one 'success' listener that closes the circuit, found ${closers.length}`);
  }
  circuit.removeListener('success', closers[0] as (...args: unknown[]) => void);

  const symbol = Object.getOwnPropertySymbols(circuit).find((own) => own.description === PENDING_CLOSE);
  if (symbol === undefined) throw broken(4, `the circuit has no Symbol('${PENDING_CLOSE}')`);
  pendingClose = symbol;

  if (typeof optionsOf(circuit)?.resetTimeout !== 'number') {
    throw broken(7, 'the circuit has no `options.resetTimeout` number');
  }
}

/** The options opossum keeps on the circuit, which its types do not declare. */
function optionsOf(circuit: OpossumCircuit): { resetTimeout: number } {
  return (circuit as unknown as { options: { resetTimeout: number } }).options;
}

/**
 * Frees a half-open circuit's probe slot (assumption 4), so that its next `fire` runs: the
 * breaker decides who probes (HalfOpenProbes), the engine runs whatever it lets through.
 */
export function freeProbeSlot(circuit: OpossumCircuit): void {
  if (pendingClose === undefined) throw broken(4, 'freeProbeSlot before any circuit was taken over');
  (circuit as unknown as Record<symbol, boolean>)[pendingClose] = true;
}

/**
 * `filter` as opossum's `errorFilter` option, which opossum calls with the fired arguments after
 * the error (assumption 5), though its types declare the error alone.
 */
export function errorFilter(filter: (error: unknown, attempt: Attempt) => boolean): (error: unknown) => boolean {
  return filter as (error: unknown) => boolean;
}

/** Calls `listener` with the attempt of each counted failure, before opossum decides to open (assumption 6). */
export function onCountedFailure(circuit: OpossumCircuit, listener: (attempt: Attempt) => void): void {
  circuit.on('failure', (_error: unknown, _latencyMs: unknown, args: unknown[]) => listener(args[0] as Attempt));
}

/**
 * How long the circuit stays open the next time it opens (assumption 7): the breaker's open time
 * grows with each failed probe, and opossum's reset timer is the one that half-opens it.
 */
export function setOpenTime(circuit: OpossumCircuit, ms: number): void {
  optionsOf(circuit).resetTimeout = ms;
}

/** The methods opossum's circuit calls on its Status, beyond what its type declares (assumption 8). */
interface OpossumStatus extends CircuitBreaker.Status {
  increment(property: string, latencyMs?: number): void;
  open(): void;
  close(): void;
  shutdown(): void;
}

/** A Status of opossum's own that starts no timer: no snapshots, buckets moved by an emitter. */
function timerlessStatusOptions(windowMs: number, buckets: number): CircuitBreaker.StatusOptions {
  return {
    rollingCountTimeout: windowMs,
    rollingCountBuckets: buckets,
    rollingPercentilesEnabled: false,
    enableSnapshots: false,
    // Given only so that opossum's Status sets no interval of its own; nothing emits on it.
    rotateBucketController: new EventEmitter(),
  };
}

/** opossum's Status class (assumption 8). */
const OpossumStatusClass = Object.getPrototypeOf(CircuitBreaker.newStatus(timerlessStatusOptions(10, 1)))
  .constructor as new (options: CircuitBreaker.StatusOptions) => OpossumStatus;

/**
 * A breaker's {@link RollingWindow} in the shape opossum takes as its `status`: it counts the
 * outcomes opossum reports (nothing else: no fires, rejects, latencies), gives opossum as `fires`
 * the attempts that ended, and empties the window when opossum closes.
 */
export class WindowStatus extends OpossumStatusClass {
  /** The next success opossum reports is not one: see {@link skipNextSuccess}. */
  private skipSuccess = false;

  constructor(readonly counts: RollingWindow) {
    super(timerlessStatusOptions(counts.windowMs, counts.buckets));
  }

  /** Totals of the window now, in opossum's shape; `fires` is the attempts that ended. */
  override get stats(): CircuitBreaker.Stats {
    const counts = this.counts;
    counts.moveOn();
    return statsOf(counts.failures, counts.successes);
  }

  /** The buckets now, newest first, in opossum's shape. */
  override get window(): CircuitBreaker.Window {
    const counts = this.counts;
    counts.moveOn();
    const window: CircuitBreaker.Window = [];
    for (let age = 0; age < counts.buckets; age++)
      window.push(statsOf(counts.failuresAt(age), counts.successesAt(age)));
    return window;
  }

  /** opossum's circuit reports each event here; only the outcomes of attempts count. */
  override increment(property: string, _latencyMs?: number): void {
    if (property === 'failures') this.counts.countFailure();
    else if (property === 'successes') {
      if (this.skipSuccess) this.skipSuccess = false;
      else this.counts.countSuccess();
    }
  }

  /**
   * Leaves out the success opossum reports next: the end of an attempt that counts nowhere,
   * which opossum reports as a success (its error filter let it through) right after the filter
   * said so (assumption 5).
   */
  skipNextSuccess(): void {
    this.skipSuccess = true;
  }

  /** opossum calls this when the circuit closes. */
  override close(): void {
    this.counts.clear();
  }
}

/** One object literal: opossum reads the stats on every failure that counts. */
function statsOf(failures: number, successes: number): CircuitBreaker.Stats {
  return {
    failures,
    successes,
    fires: failures + successes,
    fallbacks: 0,
    rejects: 0,
    timeouts: 0,
    cacheHits: 0,
    cacheMisses: 0,
    semaphoreRejections: 0,
    percentiles: {},
    latencyTimes: [],
    latencyMean: -1,
  };
}

/** What an {@link OpossumEngine} opens on, and for how long. */
export interface OpossumEngineOptions {
  errorThresholdPercentage: number;
  volumeThreshold: number;
  resetTimeoutMs: number;
}

// opossum's action, one for every engine: an attempt comes in as its argument, so firing it
// makes no closure.
function runAttempt(attempt: Attempt): Promise<unknown> {
  return attempt();
}

/**
 * The breaker's engine on opossum 9: opossum counts (into the breaker's window, its `status`),
 * opens on failures past the threshold and half-opens on its own reset timer (unref'd, cleared
 * by {@link shutdown}; it takes no clock, so tests move it with jest's fake timers). It gets no
 * `capacity` and `timeout: false` (lanes bound concurrency, and the attempt's own timeout aborts
 * the work before it reports failure), nor an `abortController` (opossum's is one per circuit).
 * It closes nothing on its own, and admits every call the breaker fires: the breaker decides.
 */
export class OpossumEngine implements BreakerEngine {
  /** The opossum circuit, for its events and `stats` (diagnostics and tests). */
  readonly circuit: OpossumCircuit;
  private readonly status: WindowStatus;
  /** The attempt the error filter just judged to count nowhere, for the `success` opossum emits at once for it. */
  private uncountedAttempt: Attempt | undefined;
  private uncountedVerdict: 'stopped' | 'own_failure' = 'stopped';

  constructor(name: string, window: RollingWindow, options: OpossumEngineOptions, listener: EngineListener) {
    this.status = new WindowStatus(window);
    const circuit: OpossumCircuit = new CircuitBreaker(runAttempt, {
      name,
      status: this.status,
      timeout: false,
      errorThresholdPercentage: options.errorThresholdPercentage,
      volumeThreshold: options.volumeThreshold,
      resetTimeout: options.resetTimeoutMs,
      rollingCountTimeout: window.windowMs,
      rollingCountBuckets: window.buckets,
      rollingPercentilesEnabled: false,
      enableSnapshots: false,
      errorFilter: errorFilter((error, attempt) => this.filtered(listener.judge(error, attempt), attempt)),
    });
    this.circuit = circuit;
    takeOver(circuit);
    circuit.on('success', () => {
      const attempt = this.uncountedAttempt;
      if (attempt === undefined) return listener.succeeded();
      this.uncountedAttempt = undefined;
      listener.uncounted(attempt, this.uncountedVerdict);
    });
    circuit.on('open', () => listener.opened());
    circuit.on('halfOpen', () => listener.halfOpened());
    circuit.on('close', () => listener.closed());
    onCountedFailure(circuit, (attempt) => listener.countedFailure(attempt));
  }

  fire(attempt: Attempt): Promise<unknown> {
    const circuit = this.circuit;
    // Half open, the breaker let it through as a probe: opossum's own slot must not refuse it.
    if (circuit.halfOpen) freeProbeSlot(circuit);
    return circuit.fire(attempt);
  }

  open(): void {
    this.circuit.open();
  }

  close(): void {
    this.circuit.close();
  }

  setOpenTime(ms: number): void {
    setOpenTime(this.circuit, ms);
  }

  shutdown(): void {
    this.circuit.shutdown();
  }

  /** opossum's error filter: true for an error that does not count, which opossum then reports as a success at once. */
  private filtered(verdict: RejectionVerdict, attempt: Attempt): boolean {
    if (verdict === 'failure') return false;
    if (verdict === 'answered') return true;
    this.uncountedAttempt = attempt;
    this.uncountedVerdict = verdict;
    this.status.skipNextSuccess();
    return true;
  }
}
