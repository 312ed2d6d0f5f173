import { type Clock, deferred, isResilienceError, noop, ResilienceError } from '../../common';
import type { FireOptions } from '../../circuit-breaker';
import type { ChatCompletion } from '../chat.types';
import type { RouteRun } from './failover-call';
import type { LlmTarget } from './llm-route';
import {
  type CommittedStream,
  startProviderAttempt,
  startStreamAttempt,
  type StartedProviderAttempt,
} from './provider-attempt';
import type { AttemptHold } from './request-account';

/** The options of an attempt fired with less than its target's own time. */
const SHORTENED: FireOptions = Object.freeze({ timeoutShortened: true });
/** Failures that say the target is slow or sick: its latency average takes the attempt's whole timeout. */
const PENALISED = new Set(['transient', 'timeout']);

/** An attempt in flight. */
export interface Running<A = ChatCompletion> {
  readonly target: LlmTarget;
  readonly hold: AttemptHold;
  /** A hedge: its place in `progress.hedges`. */
  readonly hedgeIndex: number | undefined;
  /** Undefined when the breaker refused it (its half-open probe had gone to another request). */
  readonly started: StartedProviderAttempt<A | ChatCompletion | CommittedStream> | undefined;
  /** Settles once the attempt answered or failed; never rejects. */
  answer: Promise<Running<A>>;
  value?: A | ChatCompletion | CommittedStream;
  error?: ResilienceError;
  /** Streams: ends what the breaker watches, once the stream was delivered (or not). */
  finish(error?: unknown): void;
}

/**
 * Starts a request's attempts (a first one or a hedge) through their targets' breakers, and
 * measures each for its target's load; the race decides what becomes of them. One per request.
 */
export class AttemptLauncher<A = ChatCompletion> {
  /** Provider requests started, each settled once its request has stopped. */
  readonly pending: Array<Promise<void>> = [];

  constructor(
    private readonly clock: Clock,
    private readonly call: RouteRun<A>,
  ) {}

  /**
   * Starts one attempt through its target's breaker; a refusal there (a half-open probe gone)
   * fails it. The caller has counted it in its target's load (`load.started()`).
   */
  launch(target: LlmTarget, hold: AttemptHold, timeoutMs: number, hedgeIndex: number | undefined): Running<A> {
    const { call, clock } = this;
    const { progress } = call;
    const watched = deferred<void>();
    // Rejected for a stream that failed before its commit too, when nothing waits on it any more.
    watched.promise.catch(noop);
    let started: Running<A>['started'];
    const fired = target.breaker.fire<A | ChatCompletion | CommittedStream | void>(
      () => {
        progress.attempts++;
        if ('ask' in call) {
          // Another answer than a chat completion: its ask makes the attempt, never a stream.
          started = call.ask.start(clock, target, { pool: call.pool, call: call.abort, timeoutMs });
          this.pending.push(started.settled);
          this.measure(target, started, timeoutMs);
          return started.outcome;
        }
        const setup = {
          request: { ...call.request, model: target.target.model },
          passThrough: call.passThrough,
          maxOutputTokens: call.account.outputCap,
          pool: call.pool,
          call: call.abort,
          timeoutMs,
          idleTimeoutMs: call.deliver ? call.route.idleTimeoutMs : undefined,
        };
        started = call.deliver ? startStreamAttempt(clock, target, setup) : startProviderAttempt(clock, target, setup);
        this.pending.push(started.settled);
        this.measure(target, started, timeoutMs);
        // A completion ends the breaker's watch when it comes; a stream only once it was delivered.
        return call.deliver ? started.outcome.then(() => watched.promise) : started.outcome;
      },
      call.tenant,
      this.fireOptions(target, timeoutMs),
    );
    // opossum runs the action before `fire` returns: `started` is set by now, unless refused.
    // Refused, the attempt never ran: it is no longer in flight.
    if (!started) target.load.ended();
    // A hold the budget store cannot keep stops the attempt: its spending is no longer covered.
    const stoppable = started;
    if (stoppable) hold.stopIfLost((reason) => stoppable.stop(reason));
    // Its `answer` is set below: it settles with the object itself.
    const running = {
      target,
      hold,
      hedgeIndex,
      started,
      finish: (error?: unknown) => (error === undefined ? watched.resolve() : watched.reject(error)),
    } as Running<A>;
    // A stream's answer is its commit; the breaker's promise settles only after delivery.
    const answered = call.deliver && started ? started.outcome : fired;
    running.answer = (answered as Promise<A | ChatCompletion | CommittedStream>).then(
      (value) => {
        running.value = value;
        return running;
      },
      (error: unknown) => {
        running.error = isResilienceError(error) ? error : new ResilienceError('internal', 'internal error');
        return running;
      },
    );
    // A stream's failures before its commit reach the race through `started.outcome`; the
    // breaker's own promise is only watched, never left unhandled.
    if (call.deliver) fired.catch(noop);
    return running;
  }

  /**
   * Keeps the target's load: in flight (since its caller counted it) until its provider request
   * has settled, however it ends (answered, failed, stopped as a hedge that lost, a stream cut or
   * delivered); its latency sampled at the answer (a stream's first content), a failure that
   * says the target is slow or sick counted as the whole timeout. A stopped attempt says nothing
   * of the target.
   */
  private measure(target: LlmTarget, started: StartedProviderAttempt<unknown>, timeoutMs: number): void {
    const { load } = target;
    if (!load.tracked) return;
    const { clock } = this;
    const kind = this.call.deliver ? 'first_token' : 'answer';
    const startedAt = clock.now();
    void started.settled.then(() => load.ended());
    started.outcome.then(
      () => load.sample(kind, clock.now() - startedAt, clock.now()),
      (error: unknown) => {
        if (isResilienceError(error) && PENALISED.has(error.kind)) load.sample(kind, timeoutMs, clock.now());
      },
    );
  }

  /**
   * An attempt the route's deadline left less than its target's own time (a slow first target
   * used most of it) times out by the route's choice, not the target's: its timeout counts nowhere
   * in the target's breaker, and it may not be a probe (docs/design.md, circuit breakers).
   */
  private fireOptions(target: LlmTarget, timeoutMs: number): FireOptions | undefined {
    return timeoutMs < this.attemptTimeout(target) ? SHORTENED : undefined;
  }

  private attemptTimeout(target: LlmTarget): number {
    return this.call.deliver ? this.call.route.firstByteTimeoutMs : target.timeoutMs;
  }

  /** The attempt timeout of a first attempt at `target`, bounded by what is left of the deadline. */
  timeoutOf(target: LlmTarget, leftMs: number): number {
    return Math.min(this.attemptTimeout(target), leftMs);
  }
}
