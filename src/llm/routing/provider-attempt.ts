import { type Clock, isResilienceError, LazyAbortController, noop, ResilienceError, stopReason } from '../../common';
import {
  AttemptHttp,
  type HttpPool,
  type HttpResponse,
  type HttpStreamResponse,
  type ToolHttp,
  type ToolHttpOptions,
} from '../../containment';
import type { ChatCompletion, ChatRequest, PassThroughRequest } from '../chat.types';
import { AttemptDeadline } from '../../pipeline';
import type { ProviderAttempt } from '../providers/llm-provider';
import { malformedAnswerError } from '../providers/provider-errors';
import { maxAnswerCharacters } from '../wire';
import { type ChunkBatch, chunkBatches } from '../streaming/chunk-batch';
import { ProviderStream } from '../streaming/provider-stream';
import type { LlmTarget } from './llm-route';

/** A streamed answer at its commit point: what arrived up to its first content, and the rest to read. */
export interface CommittedStream {
  /**
   * The batches up to and including the one whose last chunk is the first that carries content
   * (all of them if the answer had none).
   */
  readonly head: ChunkBatch[];
  readonly stream: ProviderStream;
}

/** One attempt under way. */
export interface StartedProviderAttempt<T> {
  /**
   * The answer (a completion, or a stream at its commit point), or the failure: `timeout` at the
   * deadline and the call's stop reason, each at once.
   */
  outcome: Promise<T>;
  /** Resolves once the provider's request itself has settled (a stream: ended or cancelled); never rejects. */
  settled: Promise<void>;
  /** Cancels the provider's request now (a hedge that lost); `outcome`, if still pending, fails with `reason`. */
  stop(reason: ResilienceError): void;
  /**
   * Whether the prompt may have reached the provider: false only while the attempt's request
   * still waits for a permit of the pool and none went out before (so an attempt stopped there
   * cost nothing). A provider that sends nothing through the pool (the fake) counts as sent.
   */
  readonly promptSent: boolean;
}

/** What starting an attempt needs besides the target. */
export interface AttemptSetup {
  request: ChatRequest;
  passThrough?: PassThroughRequest;
  maxOutputTokens: number;
  pool: HttpPool;
  /** The call's cancellation: the client leaving, shutdown. */
  call: LazyAbortController;
  /** How long the answer may take: a completion whole, a stream up to its first content. */
  timeoutMs: number;
  /**
   * Streams: the longest wait between two chunks after the first content. The route's own idle
   * timeout enforces it on the clock; the provider's requests are only told not to give up sooner.
   */
  idleTimeoutMs?: number;
}

/**
 * Starts one attempt at a target with its own AbortController: aborted at the attempt's
 * deadline and when the call is (its client left, shutdown), the provider's request with it.
 * The caller hears at once; whoever holds the lane slot waits for `settled`.
 */
export function startProviderAttempt(
  clock: Clock,
  target: LlmTarget,
  setup: AttemptSetup,
): StartedProviderAttempt<ChatCompletion> {
  return start(clock, target, setup, (attempt) => target.provider.complete(attempt));
}

/**
 * {@link startProviderAttempt} for a streamed answer: the outcome is the stream at its commit
 * point, the first chunk that carries content, which must come within `timeoutMs` (the route's
 * first-byte timeout). After it the stream belongs to the caller: it reads on with its own idle
 * timeout, and `settled` waits until the stream has ended or been cancelled.
 */
export function startStreamAttempt(
  clock: Clock,
  target: LlmTarget,
  setup: AttemptSetup,
): StartedProviderAttempt<CommittedStream> {
  let stream: ProviderStream | undefined;
  const started = start(clock, target, setup, async (attempt, abort) => {
    const { provider } = target;
    // A provider whose chunks are Chat Completions' own hands them over a read at a time.
    const batches = provider.streamBatches ? provider.streamBatches(attempt) : chunkBatches(provider.stream(attempt));
    // Every choice may use the whole cap: a stream that sends more than they could is refused.
    const maxCharacters = maxAnswerCharacters(setup.maxOutputTokens * (setup.request.n ?? 1));
    const unreadable = () => malformedAnswerError(attempt.target, 200);
    stream = new ProviderStream(batches, clock, abort, target.label, unreadable, maxCharacters);
    const head: ChunkBatch[] = [];
    for (;;) {
      // No wait of its own: the attempt's timer below bounds the time to the first content.
      const batch = await stream.next();
      if (!batch) break;
      head.push(batch);
      if (stream.committed) break;
    }
    return { head, stream };
  });
  // Past the commit the attempt's timer and its link to the call are gone: the stream follows
  // the call itself until it ends.
  const outcome = started.outcome.then((committed) => {
    const detach = setup.call.onAbort((reason) => committed.stream.stop(stopReason(reason)));
    void committed.stream.settled.then(detach);
    return committed;
  });
  // The stream's own end, not the commit, is when the provider's request has settled.
  const settled = started.settled.then(() => stream?.settled);
  return {
    outcome,
    settled,
    stop: (reason) => {
      started.stop(reason);
      stream?.stop(reason);
    },
    get promptSent() {
      return started.promptSent;
    },
  };
}

function start<T>(
  clock: Clock,
  target: LlmTarget,
  setup: AttemptSetup,
  answer: (attempt: ProviderAttempt, abort: LazyAbortController) => Promise<T>,
): StartedProviderAttempt<T> {
  return startAttempt(clock, target, setup, (http, abort) =>
    answer(
      {
        target: target.target,
        request: setup.request,
        passThrough: setup.passThrough,
        maxOutputTokens: setup.maxOutputTokens,
        http,
        // Made only if the provider asks: an AbortSignal costs more than the rest of the attempt's set-up.
        get signal() {
          return abort.signal;
        },
        // A stream's requests must not give up between chunks sooner than the route's idle timeout.
        timeoutMs: Math.max(setup.timeoutMs, setup.idleTimeoutMs ?? 0),
      },
      abort,
    ),
  );
}

/** What every attempt is started with, whatever it asks its target for. */
export type AttemptTiming = Pick<AttemptSetup, 'pool' | 'call' | 'timeoutMs'>;

/**
 * Starts one attempt at `target` whose request `answer` makes through `http` (the call's pool,
 * stopped with the attempt): its own abort, its deadline, its link to the call. What a chat
 * completion, a stream and an embeddings request share.
 */
export function startAttempt<T>(
  clock: Clock,
  target: LlmTarget,
  timing: AttemptTiming,
  answer: (http: ToolHttp, abort: LazyAbortController) => Promise<T>,
): StartedProviderAttempt<T> {
  const { call, timeoutMs } = timing;
  if (call.aborted) {
    return {
      outcome: Promise.reject(stopReason(call.reason)),
      settled: Promise.resolve(),
      stop: noop,
      promptSent: false,
    };
  }
  const abort = new LazyAbortController();
  const http = new PromptHttp(new AttemptHttp(timing.pool, abort));
  let answered: Promise<T>;
  try {
    answered = answer(http, abort);
  } catch (error) {
    answered = Promise.reject(error);
  }
  const settled = answered.then(noop, noop);
  const deadline = new AttemptDeadline(
    clock,
    answered,
    timeoutMs,
    () => new ResilienceError('timeout', `target ${target.label} did not answer within ${timeoutMs} ms`),
    (error) => (isResilienceError(error) ? error : new ResilienceError('internal', `target ${target.label} failed`)),
    abort,
    call,
  );
  return {
    outcome: deadline.outcome,
    settled,
    stop: (reason) => deadline.stop(reason),
    get promptSent() {
      return http.promptSent;
    },
  };
}

/**
 * An attempt's HTTP, noting whether a request went out: one that waits for a pool permit has
 * sent nothing yet, and an attempt stopped there owes nothing for its prompt.
 */
class PromptHttp implements ToolHttp {
  private waiting = false;
  private sent = false;
  private readonly markSent = () => {
    this.sent = true;
  };

  constructor(private readonly http: ToolHttp) {}

  get promptSent(): boolean {
    return this.sent || !this.waiting;
  }

  request(url: string, options: ToolHttpOptions): Promise<HttpResponse> {
    this.waiting = true;
    return this.http.request(url, { ...options, onSend: this.markSent });
  }

  stream(url: string, options: Omit<ToolHttpOptions, 'signal' | 'maxResponseBytes'>): Promise<HttpStreamResponse> {
    this.waiting = true;
    return this.http.stream(url, { ...options, onSend: this.markSent });
  }
}
