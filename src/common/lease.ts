import { type Awaitable, isPromiseLike } from './awaitable';
import type { Clock, TimerHandle } from './clock';

/** Extra time a hold or lease outlives the work it covers: for the answer to be written and settled. */
export const LEASE_MARGIN_MS = 5_000;

/**
 * How long a hold (money reserved) or a lease (an idempotency claim) must last should nobody
 * renew it: the longest the work may wait in its lane's queue, then run (every attempt and
 * backoff: its deadline), and a margin for answering. This is what a replica that dies
 * mid-call leaves behind; while the process lives, a {@link LeaseKeeper} renews it, since some
 * work has no bound a lifetime could be made of (a streamed answer is not cut at a deadline, and
 * a slow reader stretches it).
 */
export function leaseLifetimeMs(queueWaitMs: number, runMs: number): number {
  return queueWaitMs + runMs + LEASE_MARGIN_MS;
}

/**
 * Asks the store to keep a hold or lease for `ttlMs` more from now: true when it did, false
 * when the hold is gone (lapsed, settled, taken over). Rejects or throws when the store could
 * not be asked.
 */
export type RenewLease = (ttlMs: number) => Awaitable<boolean>;

/**
 * Why a kept hold was lost: the store answered that it is gone, or it could not be renewed
 * before it would lapse (the store was unreachable for most of its lifetime).
 */
export type LeaseLoss = 'gone' | 'unreachable';

/** Renewals per lifetime: a hold survives two renewals in a row that the store could not answer. */
const RENEWALS_PER_LIFETIME = 3;

/**
 * Keeps a hold or lease alive for as long as the work it covers runs: renews it for its whole
 * lifetime every third of it, on the clock, until {@link stop}. Renewals never overlap; one the
 * store could not answer is tried again at the next turn, and once the next turn would come
 * after the hold lapses, the hold is reported lost (`unreachable`). A store that answers that
 * the hold is gone reports it lost at once (`gone`). Either way `onLost` is told once, and
 * nothing is renewed after.
 *
 * One timer per kept hold, `unref`'d: a keeper never holds the process open.
 */
export class LeaseKeeper {
  private readonly everyMs: number;
  /** When the hold lapses, as far as the last renewal the store answered says. */
  private keptUntil: number;
  private timer: TimerHandle | undefined;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: number,
    private readonly renew: RenewLease,
    private readonly onLost: (loss: LeaseLoss) => void,
  ) {
    if (!(ttlMs > 0 && Number.isFinite(ttlMs))) throw new RangeError(`ttlMs must be a positive number, got ${ttlMs}`);
    this.everyMs = ttlMs / RENEWALS_PER_LIFETIME;
    this.keptUntil = clock.now() + ttlMs;
    this.schedule();
  }

  /** The work is over (the hold was settled or the lease completed): renews nothing more. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    this.timer = this.clock.setTimer(() => this.renewNow(), this.everyMs, { unref: true });
  }

  private renewNow(): void {
    this.timer = undefined;
    if (this.stopped) return;
    const askedAt = this.clock.now();
    let answer: Awaitable<boolean>;
    try {
      answer = this.renew(this.ttlMs);
    } catch {
      this.unanswered();
      return;
    }
    if (!isPromiseLike(answer)) {
      this.answered(answer, askedAt);
      return;
    }
    answer.then(
      (kept) => this.answered(kept, askedAt),
      () => this.unanswered(),
    );
  }

  private answered(kept: boolean, askedAt: number): void {
    if (this.stopped) return;
    if (!kept) {
      this.lose('gone');
      return;
    }
    this.keptUntil = askedAt + this.ttlMs;
    this.schedule();
  }

  private unanswered(): void {
    if (this.stopped) return;
    if (this.clock.now() + this.everyMs >= this.keptUntil) {
      this.lose('unreachable');
      return;
    }
    this.schedule();
  }

  private lose(loss: LeaseLoss): void {
    this.stop();
    this.onLost(loss);
  }
}
