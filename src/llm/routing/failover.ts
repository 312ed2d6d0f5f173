import { type Clock, isResilienceError, LazyAbortController, type Random, ResilienceError, sleep } from '../../common';
import type { HttpPool } from '../../containment';
import { stopReason } from '../../dispatch';
import type { ChatCompletion, ChatRequest } from '../chat.types';
import type { LlmRoute, LlmTarget } from './llm-route';
import { startProviderAttempt } from './provider-attempt';
import type { RequestAccount } from './request-account';

/** Who served a request, and how. */
export interface Served {
  completion: ChatCompletion;
  target: LlmTarget;
}

/** What the loop did, for the answer, the metrics and the ledger, whether it served or not. */
export interface FailoverProgress {
  /** Attempts made, across every target. */
  attempts: number;
  /** Times it moved on to the next target. */
  failovers: number;
  /** Each attempt's target and outcome (`ok` or an error kind), in order. */
  readonly tried: Array<{ target: LlmTarget; outcome: string }>;
}

/** What a request needs for its attempts. */
export interface FailoverCall {
  route: LlmRoute;
  /** The client's request with the output cap set; each target gets it with its own model. */
  request: ChatRequest;
  pool: HttpPool;
  /** The call's cancellation: its client leaving, shutdown. */
  abort: LazyAbortController;
  account: RequestAccount;
  progress: FailoverProgress;
}

/** Kinds that are the target's passing trouble: tried again on it, then on the next. */
const RETRIED = new Set(['transient', 'timeout']);
/** Kinds that end the request whatever targets are left: its caller went, or shutdown stopped it. */
const FINAL = new Set(['stopped']);

/**
 * The targets of a route in order. On each: its breaker (an open one is passed over at once),
 * then attempts with full-jitter backoff and the provider's Retry-After, for `transient` and
 * `timeout` only; any other failure moves to the next target at once. One deadline covers every
 * attempt and wait. Every attempt's worst case is held before it starts and settled after.
 * When every target failed, the answer is the last failure (`circuit_open` when every breaker
 * was open).
 */
export async function serveWithFailover(clock: Clock, random: Random, call: FailoverCall): Promise<Served> {
  const { route, progress, account } = call;
  const deadline = clock.now() + route.deadlineMs;
  const pending: Array<Promise<void>> = [];
  let last: ResilienceError | undefined;
  try {
    for (const target of route.targets) {
      const request = { ...call.request, model: target.target.model };
      for (let attempt = 1; attempt <= route.retry.maxAttempts; attempt++) {
        const leftMs = deadline - clock.now();
        if (leftMs <= 0) throw last ?? deadlineError(route.deadlineMs);
        // Counted once the next target is really reached, not when the deadline ended it first.
        if (attempt === 1 && target !== route.targets[0]) progress.failovers++;
        const refusal = target.breaker.refusal();
        if (refusal) {
          last = refusal;
          progress.tried.push({ target, outcome: 'circuit_open' });
          break;
        }
        const hold = await account.hold(target);
        // The caller may have left while the hold was made: nothing was sent, so nothing is owed.
        if (call.abort.aborted) {
          await account.released(hold);
          throw stopReason(call.abort.reason);
        }
        try {
          // Started only once the breaker lets it through: a half-open breaker's one probe may
          // have gone to another request since its refusal was checked above.
          const completion = await target.breaker.fire(() => {
            progress.attempts++;
            const started = startProviderAttempt(
              clock,
              target,
              request,
              account.outputCap,
              call.pool,
              call.abort,
              Math.min(target.timeoutMs, leftMs),
            );
            pending.push(started.settled);
            return started.outcome;
          });
          await account.succeeded(hold, completion.usage);
          progress.tried.push({ target, outcome: 'ok' });
          return { completion, target };
        } catch (error) {
          const failure = isResilienceError(error) ? error : new ResilienceError('internal', 'internal error');
          await account.failed(hold, failure);
          progress.tried.push({ target, outcome: failure.kind });
          last = failure;
          if (FINAL.has(failure.kind)) throw failure;
          if (!RETRIED.has(failure.kind) || attempt === route.retry.maxAttempts) break;
          // A failure that opened the breaker ends this target now, not after a wasted wait.
          if (target.breaker.refusal()) break;
          const waitMs = route.retry.backoffMs(attempt, random, failure.retryAfterMs);
          // A wait that would outlast the deadline is better spent on the next target.
          if (clock.now() + waitMs >= deadline) break;
          // Stopped as an attempt would be: any reason but a ResilienceError reads as `stopped`.
          await sleep(clock, waitMs, call.abort.signal).catch((reason: unknown) => {
            throw stopReason(reason);
          });
        }
      }
    }
    throw last ?? deadlineError(route.deadlineMs);
  } finally {
    // The lane slot is held until every request made has really stopped.
    await Promise.all(pending);
  }
}

function deadlineError(deadlineMs: number): ResilienceError {
  return new ResilienceError('timeout', `no target answered within the route's deadline of ${deadlineMs} ms`);
}
