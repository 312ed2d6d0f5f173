import { DEFAULT_PRIORITY, PRIORITY_CLASSES, type PriorityClass, rankOf } from '../bulkhead';
import { type Clock, Listeners, type Random, ResilienceError, type TimerHandle } from '../common';
import type { OverloadSettings } from './overload.options';
import type { PressureReading, PressureSource } from './pressure-source';
import { overloadLevel, RECOVERY_PRESSURE, refusalProbability } from './shed-curve';

/**
 * Weight of the newest window in the smoothed pressure: half, so one GC pause or one slow
 * window (a single reading at twice the threshold) does not start shedding on its own, and two
 * in a row do.
 */
const SMOOTHING = 0.5;

/** Retry-After before any overload has been seen to end: two windows, what smoothing needs to come down. */
const FIRST_RECOVERY_WINDOWS = 2;

/** The guard as `GET /metrics` shows it. */
export interface OverloadSnapshot {
  overloaded: boolean;
  /** 0-1: how hard the guard sheds (0 when not overloaded). */
  level: number;
  /** The smoothed pressure: the worse of delay and heap over their thresholds (1 = at a threshold). */
  pressure: number;
  /** The last window's reading. */
  reading: PressureReading;
  /** The Retry-After an overloaded refusal gives now, in milliseconds. */
  retryAfterMs: number;
}

/**
 * Refuses new calls while the process itself is saturated: every lane shares one event loop,
 * so when the loop runs late every lane's calls slow together. Reads the loop's delay and the
 * heap once per window (an unref'd timer), and while their pressure is past a threshold refuses
 * a share of new calls that rises with it, lowest class first (see {@link refusalProbability}).
 * It enters at pressure 1 and leaves below {@link RECOVERY_PRESSURE}, so it does not flap.
 *
 * The check a call makes ({@link refusal}) reads numbers set by the last window and allocates
 * nothing unless it refuses.
 */
export class OverloadGuard {
  private overloaded = false;
  private pressure = 0;
  private level = 0;
  private reading: PressureReading = { eventLoopDelayMs: 0, heapUsedRatio: 0 };
  /** Refusal probability by rank, set each window. */
  private readonly probabilities = [0, 0, 0];
  private message = '';
  private retryAfter: number;
  private overloadedSince = 0;
  /** How long overloads took to end, smoothed; undefined until one has. */
  private recoveryMs: number | undefined;
  private timer: TimerHandle | undefined;
  private readonly refused = new Listeners<[PriorityClass]>();
  private readonly changed = new Listeners<[boolean]>();

  constructor(
    private readonly settings: OverloadSettings,
    private readonly source: PressureSource,
    private readonly clock: Clock,
    private readonly random: Random,
  ) {
    this.retryAfter = settings.sampleIntervalMs * FIRST_RECOVERY_WINDOWS;
  }

  /** Starts reading the process every `sampleIntervalMs`. */
  start(): void {
    if (this.timer !== undefined) return;
    // The first window starts now: what the loop did while the app was built (modules loaded
    // and compiled in one block) says nothing about the load it serves.
    this.source.read();
    let dueAt = this.clock.now() + this.settings.sampleIntervalMs;
    const tick = () => {
      const now = this.clock.now();
      this.sample(now - dueAt);
      dueAt = now + this.settings.sampleIntervalMs;
      this.timer = this.clock.setTimer(tick, this.settings.sampleIntervalMs, { unref: true });
    };
    this.timer = this.clock.setTimer(tick, this.settings.sampleIntervalMs, { unref: true });
  }

  /** Stops reading, closes the source and admits everything from now on. */
  stop(): void {
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.source.close();
    this.overloaded = false;
  }

  /**
   * Reads one window and sets what calls are checked against until the next.
   *
   * @param timerLateMs how late the guard's own timer fired: a loop delay too. A loop blocked for
   *   a whole window gives the delay monitor no tick to record (an empty window), but it still
   *   makes this timer late by as much.
   */
  private sample(timerLateMs: number): void {
    const read = this.source.read();
    const reading =
      timerLateMs > read.eventLoopDelayMs ? { eventLoopDelayMs: timerLateMs, heapUsedRatio: read.heapUsedRatio } : read;
    this.reading = reading;
    const raw = Math.max(
      reading.eventLoopDelayMs / this.settings.eventLoopDelayMs,
      reading.heapUsedRatio / this.settings.heapUsedRatio,
    );
    this.pressure = SMOOTHING * raw + (1 - SMOOTHING) * this.pressure;
    const now = this.clock.now();
    if (!this.overloaded && this.pressure >= 1) this.enter(now);
    else if (this.overloaded && this.pressure < RECOVERY_PRESSURE) this.leave(now);
    this.level = this.overloaded ? overloadLevel(this.pressure) : 0;
    for (const priority of PRIORITY_CLASSES) {
      const rank = rankOf(priority);
      this.probabilities[rank] = refusalProbability(this.level, rank);
    }
    if (this.overloaded) {
      this.retryAfter = this.expectedRecoveryMs(now - this.overloadedSince);
      this.message =
        `the service is overloaded (event loop delay ${Math.round(reading.eventLoopDelayMs)} ms, ` +
        `heap ${Math.round(reading.heapUsedRatio * 100)} %): it refuses some new calls, the least important first`;
    }
  }

  /**
   * `overloaded` for a new call of class `priority` that the guard sheds now, else undefined.
   * Asked before admission on every path (admitCall).
   */
  refusal(priority: PriorityClass | undefined): ResilienceError | undefined {
    if (!this.overloaded) return undefined;
    const probability = this.probabilities[rankOf(priority)];
    if (probability === 0 || this.random() >= probability) return undefined;
    this.refused.emit(priority ?? DEFAULT_PRIORITY);
    return new ResilienceError('overloaded', this.message, { retryAfterMs: this.retryAfter });
  }

  snapshot(): OverloadSnapshot {
    return {
      overloaded: this.overloaded,
      level: this.level,
      pressure: this.pressure,
      reading: this.reading,
      retryAfterMs: this.retryAfter,
    };
  }

  /** Each call refused, with its class; returns the disposer. */
  onRefuse(listener: (priority: PriorityClass) => void): () => void {
    return this.refused.add(listener);
  }

  /** The guard entering (true) or leaving (false) overload; returns the disposer. */
  onStateChange(listener: (overloaded: boolean) => void): () => void {
    return this.changed.add(listener);
  }

  private enter(now: number): void {
    this.overloaded = true;
    this.overloadedSince = now;
    this.changed.emit(true);
  }

  private leave(now: number): void {
    this.overloaded = false;
    const lasted = now - this.overloadedSince;
    this.recoveryMs = this.recoveryMs === undefined ? lasted : SMOOTHING * lasted + (1 - SMOOTHING) * this.recoveryMs;
    this.changed.emit(false);
  }

  /**
   * How long until this overload ends, by how long past ones took: what is left of their
   * (smoothed) length; once this one has outlasted them, as long again as it has lasted so far
   * (an overload that has lasted long is likely to last). Never under one window, never over
   * `maxRetryAfterMs`.
   */
  private expectedRecoveryMs(elapsedMs: number): number {
    const typical = this.recoveryMs ?? this.settings.sampleIntervalMs * FIRST_RECOVERY_WINDOWS;
    const remaining = typical > elapsedMs ? typical - elapsedMs : elapsedMs;
    return Math.min(this.settings.maxRetryAfterMs, Math.max(this.settings.sampleIntervalMs, remaining));
  }
}
