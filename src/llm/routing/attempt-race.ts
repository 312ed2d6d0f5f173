import { type Clock, deferred, isResilienceError, ResilienceError } from '../../common';
import type { ChatCompletion, ChatUsage } from '../chat.types';
import { isProviderFailure } from '../providers/provider-errors';
import { AttemptLauncher, type Running } from './attempt-launcher';
import type { RaceResult, RouteRun, Served } from './failover-call';
import type { LlmTarget } from './llm-route';
import type { CommittedStream } from './provider-attempt';
import type { AttemptHold, RequestAccount } from './request-account';
import type { TargetWalk } from './target-walk';

export type { FailoverCall, FailoverProgress, RaceResult, Served } from './failover-call';

/** The outcome `hedge_lost` attempts get: cancelled because another of the same request answered first. */
const HEDGE_LOST = 'hedge_lost';
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
export class AttemptRace<A = ChatCompletion> {
  private readonly launcher: AttemptLauncher<A>;

  constructor(
    private readonly clock: Clock,
    private readonly call: RouteRun<A>,
    /** The request's way through the route: where its hedges go. */
    private readonly walk: TargetWalk,
  ) {
    this.launcher = new AttemptLauncher<A>(clock, call);
  }

  /** Provider requests started, each settled once its request has stopped. */
  get pending(): Array<Promise<void>> {
    return this.launcher.pending;
  }

  /** The attempt timeout of a first attempt at `target`, bounded by what is left of the deadline. */
  timeoutOf(target: LlmTarget, leftMs: number): number {
    return this.launcher.timeoutOf(target, leftMs);
  }

  async run(target: LlmTarget, hold: AttemptHold, timeoutMs: number, deadline: number): Promise<RaceResult<A>> {
    const { route, progress } = this.call;
    const running = [this.launcher.launch(target, hold, timeoutMs, undefined)];
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

  /** The first of `running` to end, or 'hedge' when `hedgeInMs` passes first. */
  private firstOf(running: Running<A>[], hedgeInMs: number | undefined): Promise<Running<A> | 'hedge'> {
    const answers: Array<Promise<Running<A> | 'hedge'>> = running.map((attempt) => attempt.answer);
    if (hedgeInMs === undefined) return Promise.race(answers);
    const timeUp = deferred<'hedge'>();
    const timer = this.clock.setTimer(() => timeUp.resolve('hedge'), Math.max(0, hedgeInMs));
    return Promise.race([...answers, timeUp.promise]).finally(() => this.clock.clearTimer(timer));
  }

  /** Starts a hedge beside `running` if a target, the route's share and the budget allow one. */
  private async hedge(primary: LlmTarget, running: Running<A>[], deadline: number): Promise<Running<A> | undefined> {
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
    return this.launcher.launch(
      target,
      hold,
      this.timeoutOf(target, deadline - clock.now()),
      progress.hedges.length - 1,
    );
  }

  /**
   * The winner's answer served; every other attempt cancelled and settled. A winner alone (no
   * hedge ran) is only served: nothing to stop, so no error or settling made for it.
   */
  private async win(winner: Running<A>, others: Running<A>[]): Promise<Served<A>> {
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
        } else await account.charge(other.hold, this.usageOf(value));
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

  private async serve(winner: Running<A>): Promise<Served<A>> {
    const { call } = this;
    const { account, progress, deliver } = call;
    const { target, hold } = winner;
    if (!deliver) {
      const answer = winner.value as A;
      const usage = this.usageOf(answer);
      await account.charge(hold, usage);
      progress.tried.push({ target, outcome: 'ok' });
      const hedged = winner.hedgeIndex !== undefined;
      if (!('ask' in call))
        return { completion: withBilledUsage(account, answer as ChatCompletion) as A, target, hedged };
      const billed = account.billedUsage(usage);
      return { completion: billed === usage ? answer : call.ask.withUsage(answer, billed), target, hedged };
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
    return { completion: completion as A, target, hedged: winner.hedgeIndex !== undefined };
  }

  /** What a whole answer is charged for: a chat completion's usage, or what its ask reads of it. */
  private usageOf(answer: unknown): ChatUsage {
    const { call } = this;
    return 'ask' in call ? call.ask.usageOf(answer as A) : (answer as ChatCompletion).usage;
  }

  /** Settles a failed attempt: its hold charged as the failure says, a 429/529 noted against hedges. */
  private async failed(attempt: Running<A>, failure: ResilienceError): Promise<void> {
    const { account, progress } = this.call;
    await account.failed(attempt.hold, failure, attempt.started?.promptSent ?? false);
    progress.tried.push({ target: attempt.target, outcome: failure.kind });
    if (isProviderFailure(failure) && (failure.code === 'rate_limited' || failure.code === 'overloaded')) {
      attempt.target.health.throttled(this.clock, failure.retryAfterMs);
    }
    attempt.finish(failure);
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
