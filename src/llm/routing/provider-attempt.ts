import { type Clock, isResilienceError, LazyAbortController, ResilienceError } from '../../common';
import type { HttpPool } from '../../containment';
import { AttemptHttp, stopReason } from '../../dispatch';
import type { ChatCompletion, ChatRequest } from '../chat.types';
import type { LlmTarget } from './llm-route';

/** One attempt under way. */
export interface StartedProviderAttempt {
  /** The answer, or the failure: `timeout` at the deadline and the call's stop reason, each at once. */
  outcome: Promise<ChatCompletion>;
  /** Resolves once the provider's request itself has settled; never rejects. */
  settled: Promise<void>;
}

/**
 * Starts one attempt at a target with its own AbortController: aborted at the attempt's
 * deadline and when the call is (its client left, shutdown), the provider's request with it.
 * The caller hears at once; whoever holds the lane slot waits for `settled`.
 */
export function startProviderAttempt(
  clock: Clock,
  target: LlmTarget,
  request: ChatRequest,
  maxOutputTokens: number,
  pool: HttpPool,
  call: LazyAbortController,
  timeoutMs: number,
): StartedProviderAttempt {
  if (call.aborted) return { outcome: Promise.reject(stopReason(call.reason)), settled: Promise.resolve() };
  const abort = new LazyAbortController();
  let answered: Promise<ChatCompletion>;
  try {
    answered = target.provider.complete({
      target: target.target,
      request,
      maxOutputTokens,
      http: new AttemptHttp(pool, abort),
      // Made only if the provider asks: an AbortSignal costs more than the rest of the attempt's set-up.
      get signal() {
        return abort.signal;
      },
      timeoutMs,
    });
  } catch (error) {
    answered = Promise.reject(error);
  }
  const settled = answered.then(noop, noop);
  const outcome = new Promise<ChatCompletion>((resolve, reject) => {
    let done = false;
    const end = (error: ResilienceError) => {
      if (done) return;
      done = true;
      clock.clearTimer(timer);
      detach();
      // Told to stop first, answered second: the request is cancelled before anyone moves on.
      abort.abort(error);
      reject(error);
    };
    const timer = clock.setTimer(
      () => end(new ResilienceError('timeout', `target ${target.label} did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const detach = call.onAbort((reason) => end(stopReason(reason)));
    answered.then(
      (completion) => {
        if (done) return;
        done = true;
        clock.clearTimer(timer);
        detach();
        resolve(completion);
      },
      (error: unknown) => {
        if (done) return;
        done = true;
        clock.clearTimer(timer);
        detach();
        reject(isResilienceError(error) ? error : new ResilienceError('internal', `target ${target.label} failed`));
      },
    );
  });
  return { outcome, settled };
}

function noop(): void {}
