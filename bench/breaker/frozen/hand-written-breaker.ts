/**
 * The baseline: the hand-written Breaker as it was at commit afb70a5 (src/circuit-breaker/
 * breaker.ts, with rolling-window.ts beside it), before opossum came back as the engine. Kept
 * as it was, to measure the opossum Breaker against; only its imports changed (the service's
 * code from dist/). Loaded through ../load.ts, compiled by tsc like dist/.
 */
import type { Clock, ResilienceError, TimerHandle } from '../../../src/common';
import type { BreakerSettings } from '../../../src/circuit-breaker/breaker-settings';
import { built } from '../../support/built';
import { RollingWindow } from './hand-written-rolling-window';

const common = built<typeof import('../../../src/common')>('common');

export type CircuitState = 'closed' | 'open' | 'half_open';

/** What `GET /v1/circuits` shows of one breaker; counts are of the rolling window. */
export interface CircuitSnapshot {
  state: CircuitState;
  failures: number;
  successes: number;
}

export type CircuitStateListener = (to: CircuitState, from: CircuitState) => void;

const BUCKETS = 10;
/** Retry-After while the one half-open probe is out: it settles within its attempt timeout. */
const PROBE_RETRY_AFTER_MS = 1_000;

/** What a company route throws when its dependency failed: Nest's HttpException 502, 503, 504. */
const DEPENDENCY_STATUSES = new Set([502, 503, 504]);

/**
 * Only a dependency's own failures count against it: a ResilienceError `transient` or
 * `timeout`, or (from a company's route) an HttpException 502, 503 or 504.
 */
export function countsAgainstBreaker(error: unknown): boolean {
  if (common.isResilienceError(error)) return error.kind === 'transient' || error.kind === 'timeout';
  const getStatus = (error as { getStatus?: unknown } | null)?.getStatus;
  return typeof getStatus === 'function' && DEPENDENCY_STATUSES.has(getStatus.call(error) as number);
}

/**
 * A circuit breaker over a rolling window of attempt outcomes (10 buckets of
 * `rollingCountTimeoutMs / 10`, moved on lazily by the injected clock). It counts failures of
 * kind `transient` and `timeout` only; any other outcome (a 4xx, a caller that left, a refused
 * destination) is a success as far as it knows, as resilience4j treats exceptions it does not
 * record. Once the window holds `volumeThreshold` outcomes and more than
 * `errorThresholdPercentage` of them failed, it opens: it refuses with `circuit_open` and a
 * Retry-After of the time until it half-opens, `resetTimeoutMs` later (a clock timer). Half
 * open, it lets exactly one probe through: a counted failure opens it again, any other
 * outcome closes it with an empty window.
 *
 * It bounds no concurrency (lanes do), has no timeout of its own (the attempt's timeout aborts
 * the work and only then reports it) and aborts nothing: an outcome is only counted. Firing
 * one attempt costs one promise reaction: no timer, event or closure per call.
 */
export class Breaker {
  private current: CircuitState = 'closed';
  /** Half open, the one probe has gone through and not come back. */
  private probing = false;
  private forcedOpen = false;
  private stopped = false;
  private openedAt = 0;
  private resetTimer: TimerHandle = undefined;
  private readonly window: RollingWindow;
  private listeners: CircuitStateListener[] = [];
  // Made once: an attempt's outcome is counted without a closure per call.
  private readonly countSuccess = <T>(value: T): T => {
    this.succeeded();
    return value;
  };
  private readonly countFailure = (error: unknown): never => {
    this.failed(error);
    throw error;
  };

  constructor(
    readonly name: string,
    readonly settings: Readonly<BreakerSettings>,
    private readonly clock: Clock,
  ) {
    checkSettings(name, settings);
    this.window = new RollingWindow(settings.rollingCountTimeoutMs, BUCKETS, clock.now());
  }

  get state(): CircuitState {
    return this.current;
  }

  /** The `circuit_open` error a call would get now, or undefined when it may go through. */
  refusal(): ResilienceError | undefined {
    if (this.stopped || this.current === 'closed') return undefined;
    if (this.forcedOpen) return this.openError('an operator opened it', this.settings.resetTimeoutMs);
    if (this.current === 'half_open') {
      return this.probing ? this.openError('its one probe is in flight', PROBE_RETRY_AFTER_MS) : undefined;
    }
    const untilHalfOpen = this.openedAt + this.settings.resetTimeoutMs - this.clock.now();
    return this.openError('the dependency keeps failing', Math.max(1, Math.ceil(untilHalfOpen)));
  }

  /** Runs `action` as one attempt the breaker watches, or refuses it with `circuit_open`. */
  fire<T>(action: () => Promise<T>): Promise<T> {
    if (this.stopped) return action();
    const refusal = this.refusal();
    if (refusal) return Promise.reject(refusal);
    let outcome: Promise<T>;
    try {
      outcome = action();
    } catch (error) {
      outcome = Promise.reject(error);
    }
    // Half open, this attempt is the one probe: nothing else goes through until it is back.
    if (this.current === 'half_open') this.probing = true;
    return outcome.then(this.countSuccess, this.countFailure);
  }

  snapshot(): CircuitSnapshot {
    if (this.stopped) return { state: this.current, failures: 0, successes: 0 };
    this.window.advance(this.clock.now());
    return { state: this.current, failures: this.window.failures, successes: this.window.successes };
  }

  /** For operators: open now and stay open, without half-opening, until {@link close}. */
  forceOpen(): void {
    if (this.stopped) return;
    this.forcedOpen = true;
    this.clearResetTimer();
    this.openedAt = this.clock.now();
    this.moveTo('open');
  }

  /** For operators: close now with an empty window, whatever the state. */
  close(): void {
    if (this.stopped) return;
    this.forcedOpen = false;
    this.clearResetTimer();
    this.window.clear(this.clock.now());
    this.moveTo('closed');
  }

  /** Calls `listener` on every change of state; returns a function that removes it. */
  onStateChange(listener: CircuitStateListener): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((item) => item !== listener);
    };
  }

  /** Clears the reset timer; the breaker refuses nothing and counts nothing after. */
  shutdown(): void {
    this.stopped = true;
    this.clearResetTimer();
    this.listeners = [];
  }

  /**
   * An attempt that succeeded, or failed in a way that does not count. Half open, the
   * dependency answered, which is what the probe was for: it closes (so does a late answer of
   * an attempt that started before it opened).
   */
  private succeeded(): void {
    if (this.stopped) return;
    this.window.recordSuccess(this.clock.now());
    if (this.current === 'half_open') this.close();
  }

  /** An attempt that failed: a counted failure opens it when over the threshold, or at once when half open. */
  private failed(error: unknown): void {
    if (!countsAgainstBreaker(error)) return this.succeeded();
    if (this.stopped) return;
    // The window moves on first: a long attempt's failure is not counted with old ones.
    this.window.recordFailure(this.clock.now());
    if (this.current === 'half_open') this.open();
    else if (this.current === 'closed' && this.overThreshold()) this.open();
  }

  private overThreshold(): boolean {
    const { volume, failures } = this.window;
    return volume >= this.settings.volumeThreshold && failures * 100 > this.settings.errorThresholdPercentage * volume;
  }

  private open(): void {
    this.openedAt = this.clock.now();
    this.clearResetTimer();
    this.resetTimer = this.clock.setTimer(() => this.halfOpen(), this.settings.resetTimeoutMs, { unref: true });
    this.moveTo('open');
  }

  private halfOpen(): void {
    this.resetTimer = undefined;
    if (this.stopped || this.forcedOpen) return;
    this.moveTo('half_open');
  }

  private clearResetTimer(): void {
    if (this.resetTimer === undefined) return;
    this.clock.clearTimer(this.resetTimer);
    this.resetTimer = undefined;
  }

  private openError(why: string, retryAfterMs: number): ResilienceError {
    return new common.ResilienceError('circuit_open', `circuit '${this.name}' is open: ${why}`, { retryAfterMs });
  }

  private moveTo(to: CircuitState): void {
    this.probing = false;
    const from = this.current;
    if (to === from) return;
    this.current = to;
    for (const listener of this.listeners) listener(to, from);
  }
}

function checkSettings(name: string, settings: BreakerSettings): void {
  const { errorThresholdPercentage, volumeThreshold, resetTimeoutMs, rollingCountTimeoutMs } = settings;
  if (!(errorThresholdPercentage >= 1 && errorThresholdPercentage <= 100)) {
    throw new RangeError(`breaker '${name}': errorThresholdPercentage must be from 1 to 100`);
  }
  if (!(Number.isSafeInteger(volumeThreshold) && volumeThreshold >= 1)) {
    throw new RangeError(`breaker '${name}': volumeThreshold must be an integer of at least 1`);
  }
  if (!(resetTimeoutMs > 0 && Number.isFinite(resetTimeoutMs))) {
    throw new RangeError(`breaker '${name}': resetTimeoutMs must be a positive number`);
  }
  if (!(rollingCountTimeoutMs >= BUCKETS && Number.isFinite(rollingCountTimeoutMs))) {
    throw new RangeError(`breaker '${name}': rollingCountTimeoutMs must be at least ${BUCKETS}`);
  }
}
