import { type Clock, ResilienceError } from '../common';
import type { ChatAnswer, ChatCall } from './chat-call';
import type { ChatChunk, ChatRequest } from './chat.types';
import type { LlmOutcomes } from './llm-outcomes';
import { passThroughChunks } from './pass-through';
import type { FailoverCall, FailoverProgress } from './routing/failover';
import type { LlmRoute } from './routing/llm-route';
import type { RequestAccount } from './routing/request-account';
import type { ChatStreamSink } from './streaming/chat-stream-sink';
import type { ChunkBatch } from './streaming/chunk-batch';
import { completionChunks } from './streaming/completion-chunks';
import { type ChunkSending, framedBatch } from './streaming/framed-batch';

/** How long a replayed stream waits for a client that reads nothing, when its route is gone. */
const DEFAULT_IDLE_MS = 30_000;

/**
 * Sends streamed answers to their clients: a provider's stream from its commit point on, or a
 * whole completion (a cache hit, an idempotent replay) as the chunks it would have streamed as.
 *
 * The client gets the usage chunk only if it asked (`stream_options.include_usage`), with a
 * `bulkhead` field (servedBy, attempts, fromCache, hedged, costUsd); Bulkhead always asks the
 * provider for it, as it charges by it. A client that reads nothing for the route's
 * `idleTimeoutMs` is dropped (`stopped`: its slowness is not the provider's failure).
 */
export class StreamDelivery {
  constructor(
    private readonly clock: Clock,
    private readonly outcomes: LlmOutcomes,
  ) {}

  /** The `deliver` of one streamed request. */
  for(
    call: ChatCall & { sink?: ChatStreamSink },
    route: LlmRoute,
    account: RequestAccount,
    progress: FailoverProgress,
    startedAt: number,
    cache: ChatAnswer['cache'],
  ): NonNullable<FailoverCall['deliver']> {
    const sink = call.sink!;
    const withUsage = includeUsage(call.request);
    const idleMs = route.idleTimeoutMs;
    return async ({ head, stream }, target) => {
      this.outcomes.firstToken({
        route: route.name,
        target: target.label,
        seconds: (this.clock.now() - startedAt) / 1000,
      });
      const hedged = progress.hedges.includes('won');
      sink.open({
        'x-bulkhead-served-by': target.label,
        'x-bulkhead-attempts': String(progress.attempts),
        'x-bulkhead-cache': cache,
        'x-bulkhead-hedged': String(hedged),
      });
      // Chunks are this stream's own (the assembly has already read them): changed in place, as
      // a copy of each would cost an allocation per chunk.
      const sending = (chunk: ChatChunk): ChunkSending => {
        const { usage } = chunk;
        if (usage === undefined) return 'as_given';
        if (withUsage) {
          if (!usage) return 'as_given';
          // The client sees the usage it is charged for, as in a whole answer (attempt-race.ts).
          chunk.usage = account.billedUsage(usage);
          const costMicros = account.costMicros + account.usageMicros(target, chunk.usage);
          chunk.bulkhead = {
            servedBy: target.label,
            attempts: progress.attempts,
            fromCache: false,
            hedged,
            costUsd: costMicros / 1_000_000,
          };
          return 'changed';
        }
        // Asked for by Bulkhead, not by the client: the usage chunk and the field are left out.
        if (usage && chunk.choices.length === 0) return 'left_out';
        chunk.usage = undefined;
        return usage === null ? 'null_usage_left_out' : 'changed';
      };
      const send = (batch: ChunkBatch): Promise<void> | undefined => {
        const { writeFramed } = sink;
        // A client of Chat Completions' own events gets each batch in one write, the chunks
        // nothing changed in as the provider sent them; any other sink takes chunks one by one.
        if (writeFramed) {
          const text = framedBatch(batch, sending);
          return text === '' ? undefined : this.written(sink, writeFramed.call(sink, text), idleMs);
        }
        return this.sendEach(sink, batch, sending, idleMs);
      };
      for (const batch of head) {
        const waiting = send(batch);
        if (waiting) await waiting;
      }
      for (;;) {
        const batch = await stream.next(idleMs);
        if (!batch) break;
        const waiting = send(batch);
        if (waiting) await waiting;
      }
      sink.end();
    };
  }

  /** A batch's chunks written one by one, each as `sending` leaves it. */
  private async sendEach(
    sink: ChatStreamSink,
    batch: ChunkBatch,
    sending: (chunk: ChatChunk) => ChunkSending,
    idleMs: number,
  ): Promise<void> {
    for (const chunk of batch.chunks) {
      if (sending(chunk) === 'left_out') continue;
      const waiting = this.written(sink, sink.write(chunk), idleMs);
      if (waiting) await waiting;
    }
  }

  /** A whole answer streamed as the chunks a provider would have sent, then `[DONE]`. */
  async replay(call: ChatCall & { sink: ChatStreamSink }, answer: ChatAnswer, idleMs = DEFAULT_IDLE_MS): Promise<void> {
    const { sink } = call;
    sink.open({
      'x-bulkhead-served-by': answer.servedBy,
      'x-bulkhead-attempts': String(answer.attempts),
      'x-bulkhead-cache': answer.cache,
      'x-bulkhead-cost-usd': answer.costUsd.toFixed(6),
      'x-bulkhead-hedged': String(answer.hedged),
    });
    const withUsage = includeUsage(call.request);
    const { completion } = answer;
    // A pass-through answer is replayed as the events it came in, thinking and all.
    const chunks = passThroughChunks(call.passThrough?.format, completion) ?? completionChunks(completion);
    for (const chunk of chunks) {
      if (chunk.usage) {
        if (!withUsage) continue;
        chunk.bulkhead = {
          servedBy: answer.servedBy,
          attempts: answer.attempts,
          fromCache: answer.cache === 'hit' || answer.cache === 'semantic',
          similarity: answer.similarity,
          hedged: answer.hedged,
          costUsd: answer.costUsd,
          replayed: answer.replayed,
        };
      }
      const waiting = this.written(sink, sink.write(chunk), idleMs);
      if (waiting) await waiting;
    }
    sink.end();
  }

  /**
   * What a write leaves to wait for: nothing when the client took it, else its wait while the
   * client catches up, for at most `idleMs` (then the client is dropped, `stopped`).
   */
  private written(sink: ChatStreamSink, waiting: Promise<void> | undefined, idleMs: number): Promise<void> | undefined {
    return waiting && this.caughtUp(sink, waiting, idleMs);
  }

  private async caughtUp(sink: ChatStreamSink, waiting: Promise<void>, idleMs: number): Promise<void> {
    let timer: unknown;
    const stalled = new Promise<'stalled'>((resolve) => {
      timer = this.clock.setTimer(() => resolve('stalled'), idleMs);
    });
    const result = await Promise.race([waiting, stalled]);
    this.clock.clearTimer(timer);
    if (result === 'stalled') {
      sink.destroy();
      throw new ResilienceError('stopped', `the client read nothing of the stream for ${idleMs} ms`);
    }
  }
}

function includeUsage(request: ChatRequest): boolean {
  return request.stream_options?.include_usage === true;
}
