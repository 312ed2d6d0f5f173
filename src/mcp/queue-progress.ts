import type { Clock, TimerHandle } from '../common';
import type { QueueWait } from '../dispatch';

/**
 * One `notifications/progress` of a call: while it waits, milliseconds waited of at most its
 * queue TTL; once it runs, its work's own (an upstream MCP tool's), after the wait's.
 */
export interface QueueProgressUpdate {
  progress: number;
  total?: number;
  message?: string;
}

/** The longest message of a work's progress handed on: an upstream's text, clipped. */
const MAX_MESSAGE_CHARS = 500;

/**
 * Reports a call that waits in its lane: at once when it starts waiting, then every
 * `intervalMs` of the clock until it takes a slot or ends. One timer per waiting call whose
 * client asked for progress; nothing at all for a call that starts at once. Then hands on its
 * work's own progress ({@link relay}), numbered after the wait's so that what the client sees
 * only rises, as MCP requires.
 */
export class QueueProgress {
  private wait: QueueWait | undefined;
  private waitingSince = 0;
  private timer: TimerHandle | undefined;
  private stopped = false;
  /** The last progress sent: every later one must be greater. */
  private lastSent = 0;
  /** What the work's own progress is counted from: the wait's last, fixed at its first update. */
  private workFrom: number | undefined;

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

  /** The work's own progress update (the tool's `ctx.progress`): sent on unless it would not rise. */
  readonly relay = (update: { progress: number; total?: number; message?: string }): void => {
    if (this.stopped) return;
    const from = (this.workFrom ??= this.lastSent);
    const progress = from + update.progress;
    if (!(progress > this.lastSent && Number.isFinite(progress))) return;
    const total = update.total === undefined ? undefined : from + update.total;
    const message = typeof update.message === 'string' ? update.message.slice(0, MAX_MESSAGE_CHARS) : undefined;
    this.lastSent = progress;
    this.send({ progress, total, message });
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
    this.lastSent = this.clock.now() - this.waitingSince;
    this.send({
      progress: this.lastSent,
      total: wait.queueTtlMs,
      message: `waiting for a slot in lane '${wait.lane.name}': ${active} running, ${waiting} waiting`,
    });
    this.timer = this.clock.setTimer(this.report, this.intervalMs, { unref: true });
  };
}
