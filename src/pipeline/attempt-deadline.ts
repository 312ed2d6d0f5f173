import {
  type Clock,
  type LazyAbortController,
  noop,
  type ResilienceError,
  stopReason,
  type TimerHandle,
} from '../common';

/**
 * The timeout step of one attempt, a tool's or an LLM target's: `answered` raced against the
 * attempt's deadline and the call's stop (its client left, shutdown). Whichever ends the
 * attempt first, `outcome` says it at once: the answer, the failure as `failed` names it,
 * `timeout` (as `timedOut` words it) at the deadline, or the call's stop reason. A deadline or a
 * stop aborts the attempt's own controller first, so the work is told to stop before anyone
 * hears and moves on; the work itself may settle later (its caller waits for that separately).
 *
 * A class rather than closures over shared flags: an attempt pays for one object and the
 * callbacks the race needs, as the hand-written races it replaced did.
 */
export class AttemptDeadline<T> {
  readonly outcome: Promise<T>;
  private done = false;
  private readonly timer: TimerHandle;
  private readonly detach: () => void = noop;
  private resolveOutcome!: (value: T) => void;
  private rejectOutcome!: (error: ResilienceError) => void;

  /**
   * @param attempt the attempt's own controller, aborted when the deadline or a stop ends it.
   * @param call the call's controller, whose abort stops the attempt; not aborted already (the
   *   caller checked: such an attempt is not started).
   */
  constructor(
    private readonly clock: Clock,
    answered: Promise<T>,
    timeoutMs: number,
    timedOut: () => ResilienceError,
    failed: (error: unknown) => ResilienceError,
    private readonly attempt: LazyAbortController,
    call: LazyAbortController,
  ) {
    this.outcome = new Promise<T>((resolve, reject) => {
      this.resolveOutcome = resolve;
      this.rejectOutcome = reject;
    });
    this.timer = clock.setTimer(() => this.end(timedOut()), timeoutMs);
    this.detach = call.onAbort((reason) => this.end(stopReason(reason)));
    answered.then(
      (value) => {
        if (this.finish()) this.resolveOutcome(value);
      },
      (error: unknown) => {
        if (this.finish()) this.rejectOutcome(failed(error));
      },
    );
  }

  /**
   * Ends the attempt now with `reason` (a hedge that lost): `outcome` fails with it if still
   * pending; an attempt that answered already only has its work aborted.
   */
  stop(reason: ResilienceError): void {
    if (this.done) this.attempt.abort(reason);
    else this.end(reason);
  }

  private end(error: ResilienceError): void {
    if (!this.finish()) return;
    // Told to stop first, answered second: the work's signal fires before anyone hears why.
    this.attempt.abort(error);
    this.rejectOutcome(error);
  }

  /** Marks the race decided (false if it was) and drops the timer and the link to the call. */
  private finish(): boolean {
    if (this.done) return false;
    this.done = true;
    this.clock.clearTimer(this.timer);
    this.detach();
    return true;
  }
}
