import { type Clock, type Random, ResilienceError, sleep, stopReason } from '../../common';
import type { ChatCompletion } from '../chat.types';
import { isProviderFailure } from '../providers/provider-errors';
import { AttemptRace, CommittedFailure } from './attempt-race';
import type { RouteRun, Served } from './failover-call';
import { TargetFailures } from './target-failures';
import { TargetRetryContext } from './target-retry-context';
import { TargetWalk } from './target-walk';

export type { AnswerAsk, AskingCall, FailoverCall, FailoverProgress, RouteRun, Served } from './failover-call';

/** Kinds that end the request whatever targets are left: its caller went, or shutdown stopped it. */
const FINAL = new Set(['stopped']);

/**
 * The targets of a route in the order its {@link TargetWalk} chooses them: priority groups in
 * turn, inside each the route's strategy (the config's order unless it says otherwise). On
 * each: its breaker (an open one is passed over at once), then attempts with full-jitter
 * backoff and the provider's Retry-After, for `transient` and `timeout` only, while the target's
 * retry budget allows; any other failure moves to the next target at once. One deadline covers every
 * attempt and wait. Every attempt's worst case is held before it starts and settled after.
 * When every target failed, the answer is the last failure (`circuit_open` when every breaker
 * was open), its message naming each target's failure in order ({@link TargetFailures}). Each attempt may grow hedges ({@link AttemptRace}). A provider's
 * `context_length_exceeded` moves at once to a target with a larger window; with none left the
 * answer is `invalid_request` naming the sizes.
 *
 * Streamed (`call.deliver`): an attempt answers at its commit point, its first content; until
 * then a failure is retried or failed over like any other, unseen by the client. After it the
 * stream is the client's: a failure ends the request as it is, with no retry and no failover.
 *
 * Another answer than a chat completion (embeddings: an `AskingCall`) runs the same loop:
 * its `ask` makes each attempt and says what it used; breakers, holds, retries and hedges are
 * the chat's.
 */
export async function serveWithFailover<A = ChatCompletion>(
  clock: Clock,
  random: Random,
  call: RouteRun<A>,
): Promise<Served<A>> {
  const { route, progress, account } = call;
  const deadline = clock.now() + route.deadlineMs;
  const walk = new TargetWalk(route, clock, random, call.deliver ? 'first_token' : 'answer', account);
  for (const target of walk.skipped()) progress.choices.push({ target, reason: 'context_window' });
  const race = new AttemptRace<A>(clock, call, walk);
  route.hedges.requested();
  let last: ResilienceError | undefined;
  const failures = new TargetFailures();
  let reached = 0;
  let retry: TargetRetryContext | undefined;
  try {
    for (let target = walk.next(); target; target = walk.next()) {
      const reason = walk.reason;
      for (let attempt = 1; ; attempt++) {
        const leftMs = deadline - clock.now();
        if (leftMs <= 0) throw last ? failures.answer(last) : deadlineError(route.deadlineMs);
        // Counted once the next target is really reached, not when the deadline ended it first.
        if (attempt === 1) {
          if (reached++ > 0) progress.failovers++;
          progress.choices.push({ target, reason });
        }
        const refusal = target.breaker.refusal(call.tenant);
        if (refusal) {
          last = refusal;
          failures.failed(target, refusal);
          progress.tried.push({ target, outcome: 'circuit_open' });
          break;
        }
        // In flight from now, not from when the hold is made: requests choosing meanwhile see it busy.
        target.load.started();
        let hold;
        try {
          hold = await account.hold(target);
        } catch (error) {
          target.load.ended();
          throw error;
        }
        // The caller may have left while the hold was made: nothing was sent, so nothing is owed.
        if (call.abort.aborted) {
          target.load.ended();
          await account.released(hold);
          throw stopReason(call.abort.reason);
        }
        // A request's first attempt on a target is a call in the target's retry budget; a
        // failover to the next target is that one's first attempt, not a retry.
        if (attempt === 1) target.retryBudget?.recordCall();
        const result = await race.run(target, hold, race.timeoutOf(target, leftMs), deadline);
        if (result.ok) return result.served;
        const failure = result.error;
        last = failure;
        failures.failed(target, failure);
        if (FINAL.has(failure.kind)) throw failure;
        // Not worth another try here: only a larger window can take it.
        if (isProviderFailure(failure) && failure.code === 'context_length_exceeded') {
          walk.contextRefused(target);
          break;
        }
        // The target's passing trouble (the error table's retried kinds) is tried again on it;
        // anything else, a failure that opened its breaker, a wait that would outlast the
        // deadline or the target's retry budget spent moves to the next target at once.
        retry ??= new TargetRetryContext(clock, random, deadline, call.tenant);
        const waitMs = route.retry.decide(failure, retry.on(target, attempt));
        if (typeof waitMs !== 'number') break;
        // Stopped as an attempt would be: any reason but a ResilienceError reads as `stopped`.
        await sleep(clock, waitMs, call.abort.signal).catch((reason: unknown) => {
          throw stopReason(reason);
        });
      }
    }
    // Ended on a refusal of the context: the sizes say more than the provider's bare 400.
    if (isProviderFailure(last) && last.code === 'context_length_exceeded') throw walk.contextError() ?? last;
    throw last ? failures.answer(last) : deadlineError(route.deadlineMs);
  } catch (error) {
    // Part of a stream reached the client: nothing more may be tried, the failure is final.
    throw error instanceof CommittedFailure ? error.failure : error;
  } finally {
    // The lane slot is held until every request made has really stopped.
    await Promise.all(race.pending);
  }
}

function deadlineError(deadlineMs: number): ResilienceError {
  return new ResilienceError('timeout', `no target answered within the route's deadline of ${deadlineMs} ms`);
}
