import type { Clock, TimerHandle } from '../common';
import { DeadlineLists, type DeadlineNode } from './deadline-lists';

/**
 * The queue TTLs of a lane's waiting calls, all served by one timer set for the earliest
 * deadline: a timer per waiting call cost a lane about 40 % of its throughput in bursts, and
 * 265 bytes a call. A call that leaves before its deadline leaves the timer as it is: it may
 * fire for nobody, and is set again for the next deadline.
 */
export class QueueExpiry<T extends DeadlineNode<T>> {
  private readonly deadlines = new DeadlineLists<T>();
  private timer: TimerHandle = undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private readonly onTimer = () => this.expireDue();

  constructor(
    private readonly clock: Clock,
    /** Called for each node whose TTL passed, at its deadline; the node has left these lists. */
    private readonly expire: (node: T) => void,
  ) {}

  /** Starts `node`'s TTL, from `now`. */
  add(node: T, ttlMs: number, now: number): void {
    this.deadlines.add(node, ttlMs, now);
    this.arm(node.deadline, now);
  }

  /** Stops `node`'s TTL (a node it does not hold is ignored); with `nothingWaits`, the timer goes too. */
  remove(node: T, nothingWaits: boolean): void {
    this.deadlines.remove(node);
    if (nothingWaits) this.clear();
  }

  /** Sets the timer for `deadline`, unless it is already set for that or sooner. */
  private arm(deadline: number, now: number): void {
    if (deadline >= this.timerAt) return;
    this.clear();
    this.timerAt = deadline;
    this.timer = this.clock.setTimer(this.onTimer, deadline - now);
  }

  private clear(): void {
    if (this.timer === undefined) return;
    this.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  /** Every node whose TTL has passed expires, then the timer is set for the next deadline. */
  private expireDue(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    for (let node = this.deadlines.takeDue(now); node; node = this.deadlines.takeDue(now)) this.expire(node);
    const next = this.deadlines.earliest();
    if (next !== undefined) this.arm(next, now);
  }
}
