import { type Clock, deferred, isResilienceError, noop, ResilienceError } from '../../common';
import type { HttpPool } from '../../containment';
import type { FireOptions } from '../../circuit-breaker';
import type { LazyAbortController } from '../../common';
import type { ChatCompletion, ChatRequest, PassThroughRequest } from '../chat.types';
import { isProviderFailure } from '../providers/provider-errors';
import type { LlmRoute, LlmTarget } from './llm-route';
import {
  type CommittedStream,
  startProviderAttempt,
  startStreamAttempt,
  type StartedProviderAttempt,
} from './provider-attempt';
import type { AttemptHold, RequestAccount } from './request-account';
import type { ChoiceReason } from './target-strategy';
import type { SkipReason, TargetWalk } from './target-walk';

/** The options of an attempt fired with less than its target's own time. */
const SHORTENED: FireOptions = Object.freeze({ timeoutShortened: true });

/** What a request needs for its attempts. */
export interface FailoverCall {
  route: LlmRoute;
  /** The client's request with the output cap set; each target gets it with its own model. */
  request: ChatRequest;
  /** The request as it came in another wire format, for the targets that speak it. */
  passThrough?: PassThroughRequest;
  pool: HttpPool;
  /** The call's cancellation: its client leaving, shutdown. */
  abort: LazyAbortController;
  account: RequestAccount;
  progress: FailoverProgress;
  /** The caller, so that breakers tell its own failures from the dependency's. */
  tenant?: string;
  /**
   * Streamed requests: sends the winning stream to the client from its commit point on, and
   * resolves once it was sent whole (or fails with why it was not). Absent: one completion.
   */
  deliver?: (committed: CommittedStream, target: LlmTarget) => Promise<void>;
}

/** What the loop did, for the answer, the metrics and the ledger, whether it served or not. */
export interface FailoverProgress {
  /** Attempts made, across every target, hedges included. */
  attempts: number;
  /** Times it moved on to the next target. */
  failovers: number;
  /** Each attempt's target and outcome (`ok`, an error kind, or `hedge_lost`), in order of ending. */
  readonly tried: Array<{ target: LlmTarget; outcome: string }>;
  /** Each hedge started: `won` when its answer was used, `lost` otherwise. */
  readonly hedges: Array<'won' | 'lost'>;
  /** Each target the walk chose (a hedge's: `hedge`), and why; each it passed over for the request's context (`context_window`). */
  readonly choices: Array<{ target: LlmTarget; reason: ChoiceReason | SkipReason }>;
}

/** Who served a request, and how. */
export interface Served {
  /** The answer; for a stream, what it added up to. */
  completion: ChatCompletion;
  target: LlmTarget;
  /** The answer came from a hedge. */
  hedged: boolean;
}

/** How one attempt (with its hedges) ended. */
export type RaceResult =
  | { ok: true; served: Served }
  | {
      ok: false;
      /** The first attempt's failure, which decides what the loop does next. */
      error: ResilienceError;
    };

/** The outcome `hedge_lost` attempts get: cancelled because another of the same request answered first. */
const HEDGE_LOST = 'hedge_lost';
/** Failures that say the target is slow or sick: its latency average takes the attempt's whole timeout. */
const PENALISED = new Set(['transient', 'timeout']);

/** An attempt in flight. */
interface Running {
  readonly target: LlmTarget;
  readonly hold: AttemptHold;
  /** A hedge: its place in `progress.hedges`. */
  readonly hedgeIndex: number | undefined;
  /** Undefined when the breaker refused it (its half-open probe had gone to another request). */
  readonly started: StartedProviderAttempt<ChatCompletion | CommittedStream> | undefined;
  /** Settles once the attempt answered or failed; never rejects. */
  answer: Promise<Running>;
  value?: ChatCompletion | CommittedStream;
  error?: ResilienceError;
  /** Streams: ends what the breaker watches, once the stream was delivered (or not). */
  finish(error?: unknown): void;
}

/**
 * One attempt at a target and, when the route hedges, the hedges it grows: after
 * `hedgeAfterMs` without an answer (for a stream, without its first content) the next healthy
 * target starts too (see `hedgeTarget`), up to `maxHedges` and the route's 10 % share. The first
 * good answer wins; every other attempt is cancelled at once (its request aborted, which frees
 * its pool permit; its breaker not charged, as `stopped` never counts; its hold settled to the
 * prompt it was sent). A failed attempt waits for the others still running.
 *
 * A stream is delivered by `deliver` once it wins, and is charged what it used, its usage or
 * what was counted if it broke; its breaker hears how the whole stream ended.
 */
export class AttemptRace {
  /** Provider requests started, each settled once its request has stopped. */
  readonly pending: Array<Promise<void>> = [];

  constructor(
    private readonly clock: Clock,
    private readonly call: FailoverCall,
    /** The request's way through the route: where its hedges go. */
    private readonly walk: TargetWalk,
  ) {}

  async run(target: LlmTarget, hold: AttemptHold, timeoutMs: number, deadline: number): Promise<RaceResult> {
    const { route, progress } = this.call;
    const running = [this.launch(target, hold, timeoutMs, undefined)];
    let first: ResilienceError | undefined;
    let hedgeAt = route.hedgeAfterMs > 0 ? this.clock.now() + route.hedgeAfterMs : Infinity;
    while (running.length > 0) {
      const mayHedge = progress.hedges.length < route.maxHedges && hedgeAt < deadline;
      const ended = await this.firstOf(running, mayHedge ? hedgeAt - this.clock.now() : undefined);
      if (ended === 'hedge') {
        const hedge = await this.hedge(target, running, deadline);
        if (hedge) running.push(hedge);
        // One hedge at each hedgeAfterMs at most: the next one waits as long again.
        hedgeAt = this.clock.now() + route.hedgeAfterMs;
        continue;
      }
      running.splice(running.indexOf(ended), 1);
      if (ended.error === undefined) return { ok: true, served: await this.win(ended, running) };
      await this.failed(ended, ended.error);
      if (ended.hedgeIndex === undefined) first ??= ended.error;
      if (running.length === 0) return { ok: false, error: first ?? ended.error };
    }
    /* c8 ignore next */
    throw new ResilienceError('internal', 'no attempt ran');
  }

  /**
   * Starts one attempt through its target's breaker; a refusal there (a half-open probe gone)
   * fails it. The caller has counted it in its target's load (`load.started()`).
   */
  private launch(target: LlmTarget, hold: AttemptHold, timeoutMs: number, hedgeIndex: number | undefined): Running {
    const { call, clock } = this;
    const { progress } = call;
    const watched = deferred<void>();
    // Rejected for a stream that failed before its commit too, when nothing waits on it any more.
    watched.promise.catch(noop);
    let started: Running['started'];
    const fired = target.breaker.fire<ChatCompletion | CommittedStream | void>(
      () => {
        progress.attempts++;
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
    } as Running;
    // A stream's answer is its commit; the breaker's promise settles only after delivery.
    const answered = call.deliver && started ? started.outcome : fired;
    running.answer = (answered as Promise<ChatCompletion | CommittedStream>).then(
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

  /** The first of `running` to end, or 'hedge' when `hedgeInMs` passes first. */
  private firstOf(running: Running[], hedgeInMs: number | undefined): Promise<Running | 'hedge'> {
    const answers: Array<Promise<Running | 'hedge'>> = running.map((attempt) => attempt.answer);
    if (hedgeInMs === undefined) return Promise.race(answers);
    const timeUp = deferred<'hedge'>();
    const timer = this.clock.setTimer(() => timeUp.resolve('hedge'), Math.max(0, hedgeInMs));
    return Promise.race([...answers, timeUp.promise]).finally(() => this.clock.clearTimer(timer));
  }

  /** Starts a hedge beside `running` if a target, the route's share and the budget allow one. */
  private async hedge(primary: LlmTarget, running: Running[], deadline: number): Promise<Running | undefined> {
    const { clock, call } = this;
    const { route, progress } = call;
    const busy = running.map((attempt) => attempt.target);
    const target = this.walk.hedgeTarget(primary, busy, call.tenant);
    if (!target || !route.hedges.take()) return undefined;
    // Counted in flight before the hold is made, as the loop counts a first attempt.
    target.load.started();
    let hold: AttemptHold;
    try {
      hold = await call.account.hold(target);
    } catch {
      // The budget or the token bucket cannot hold another attempt: the running ones go on alone.
      target.load.ended();
      route.hedges.giveBack();
      return undefined;
    }
    // Everything may have ended (or the caller left) while the hold was made.
    if (call.abort.aborted || running.every((attempt) => attempt.value !== undefined || attempt.error !== undefined)) {
      target.load.ended();
      await call.account.released(hold);
      route.hedges.giveBack();
      return undefined;
    }
    // Counted as lost until it wins.
    progress.hedges.push('lost');
    progress.choices.push({ target, reason: 'hedge' });
    return this.launch(target, hold, this.timeoutOf(target, deadline - clock.now()), progress.hedges.length - 1);
  }

  /**
   * The winner's answer served; every other attempt cancelled and settled. A winner alone (no
   * hedge ran) is only served: nothing to stop, so no error or settling made for it.
   */
  private async win(winner: Running, others: Running[]): Promise<Served> {
    if (winner.hedgeIndex === undefined && others.length === 0) return this.serve(winner);
    const { account, progress } = this.call;
    const lost = new ResilienceError('stopped', `another target of the route answered first`);
    for (const other of others) other.started?.stop(lost);
    if (winner.hedgeIndex !== undefined) progress.hedges[winner.hedgeIndex] = 'won';
    const settling = Promise.all(
      others.map(async (other) => {
        const { value, error } = await other.answer;
        // Each is charged what it cost: an answer that came as well, its usage; a stream cut at
        // its commit, what arrived; one cancelled before it answered, as a stopped attempt.
        if (value === undefined) await account.failed(other.hold, error ?? lost, other.started?.promptSent ?? false);
        else if (this.call.deliver) {
          const { assembly } = (value as CommittedStream).stream;
          await account.charge(other.hold, assembly.usage(account.inputTokens));
        } else await account.charge(other.hold, (value as ChatCompletion).usage);
        progress.tried.push({ target: other.target, outcome: HEDGE_LOST });
        other.finish(lost);
      }),
    );
    try {
      return await this.serve(winner);
    } finally {
      await settling;
    }
  }

  private async serve(winner: Running): Promise<Served> {
    const { account, progress, deliver } = this.call;
    const { target, hold } = winner;
    if (!deliver) {
      const completion = winner.value as ChatCompletion;
      await account.charge(hold, completion.usage);
      progress.tried.push({ target, outcome: 'ok' });
      return { completion: withBilledUsage(account, completion), target, hedged: winner.hedgeIndex !== undefined };
    }
    const committed = winner.value as CommittedStream;
    const { assembly } = committed.stream;
    try {
      await deliver(committed, target);
    } catch (error) {
      const failure = isResilienceError(error) ? error : new ResilienceError('internal', 'internal error');
      // Nobody reads the rest: its request is cancelled now, so the stream settles and the slot frees.
      committed.stream.stop(failure);
      // What was streamed is charged: the usage if the provider said it, else what was counted.
      await account.charge(hold, assembly.usage(account.inputTokens));
      progress.tried.push({ target, outcome: failure.kind });
      winner.finish(failure);
      throw new CommittedFailure(failure);
    }
    await account.charge(hold, assembly.usage(account.inputTokens));
    progress.tried.push({ target, outcome: 'ok' });
    winner.finish();
    const completion = withBilledUsage(account, assembly.completion(account.inputTokens));
    return { completion, target, hedged: winner.hedgeIndex !== undefined };
  }

  /** Settles a failed attempt: its hold charged as the failure says, a 429/529 noted against hedges. */
  private async failed(attempt: Running, failure: ResilienceError): Promise<void> {
    const { account, progress } = this.call;
    await account.failed(attempt.hold, failure, attempt.started?.promptSent ?? false);
    progress.tried.push({ target: attempt.target, outcome: failure.kind });
    if (isProviderFailure(failure) && (failure.code === 'rate_limited' || failure.code === 'overloaded')) {
      attempt.target.health.throttled(this.clock, failure.retryAfterMs);
    }
    attempt.finish(failure);
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

/** A failure after the commit point, carried out of the race so the loop neither retries nor fails over. */
export class CommittedFailure extends Error {
  constructor(readonly failure: ResilienceError) {
    super(failure.message);
    this.name = 'CommittedFailure';
  }
}

/**
 * The answer with the usage it was charged for: what its client sees (and the cache keeps) is
 * what its tenant paid, never a provider's count that was not one.
 */
function withBilledUsage(account: RequestAccount, completion: ChatCompletion): ChatCompletion {
  const usage = account.billedUsage(completion.usage);
  return usage === completion.usage ? completion : { ...completion, usage };
}
