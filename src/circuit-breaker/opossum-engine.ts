import type CircuitBreaker from 'opossum';

/** One attempt as the breaker fires it: opossum's action gets it as its only argument. */
export type Attempt = () => Promise<unknown>;

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
//    admits a call while it is true and sets it false when it takes the probe.
// 5. A rejected action goes to `errorFilter(error, ...args)`; when that answers true, the circuit
//    emits `success` at once (synchronously), its status counting it before later listeners run.
// 6. A counted failure is emitted as `failure` with the fired arguments third, once the status
//    counted it and before the circuit reads the status to decide whether to open.
// 7. Each time it opens, the reset timer waits `options.resetTimeout` as it is then: a change
//    made before `open()` (or before the failure that opens it) holds for that opening.

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
 * Gives a half-open circuit's probe slot back (assumption 4): its probe ended `stopped`, which
 * tells nothing of the dependency, so the next call is the probe.
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
