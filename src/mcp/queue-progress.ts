import type { Clock, TimerHandle } from '../common';
import type { QueueWait } from '../dispatch';

/** One `notifications/progress` of a waiting call: milliseconds waited, of at most its queue TTL. */
export interface QueueProgressUpdate {
  progress: number;
  total: number;
  message: string;
}

/**
 * Reports a call that waits in its lane: at once when it starts waiting, then every
 * `intervalMs` of the clock until it takes a slot or ends. One timer per waiting call whose
 * client asked for progress; nothing at all for a call that starts at once.
 */
export class QueueProgress {
  private wait: QueueWait | undefined;
  private waitingSince = 0;
  private timer: TimerHandle | undefined;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly intervalMs: number,
    private readonly send: (update: QueueProgressUpdate) => void,
  ) {}

  /** The pipeline's `onQueued`: the call waits. */
  readonly start = (wait: QueueWait): void => {
    if (this.stopped) return;
    this.wait = wait;
    this.waitingSince = this.clock.now();
    this.report();
  };

  /** The call ended: no more reports. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
  }

  private readonly report = (): void => {
    const wait = this.wait!;
    this.timer = undefined;
    // A call that took its slot says nothing more: progress counts the wait, not the work.
    if (this.stopped || wait.started) return;
    const { active, waiting } = wait.lane.snapshot();
    this.send({
      progress: this.clock.now() - this.waitingSince,
      total: wait.queueTtlMs,
      message: `waiting for a slot in lane '${wait.lane.name}': ${active} running, ${waiting} waiting`,
    });
    this.timer = this.clock.setTimer(this.report, this.intervalMs, { unref: true });
  };
}
