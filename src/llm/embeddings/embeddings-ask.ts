import { type Clock, ResilienceError } from '../../common';
import type { ChatUsage } from '../chat.types';
import type { AnswerAsk } from '../routing/failover';
import type { LlmTarget } from '../routing/llm-route';
import { type AttemptTiming, startAttempt, type StartedProviderAttempt } from '../routing/provider-attempt';
import type { EmbeddingsAnswer, EmbeddingsRequest } from '../wire';

/**
 * How the failover loop asks a target for embeddings: the client's request with the target's
 * model, through its provider's `embed`; each attempt charged the provider's prompt tokens and
 * no completion (embeddings have no output).
 */
export class EmbeddingsAsk implements AnswerAsk<EmbeddingsAnswer> {
  constructor(private readonly request: EmbeddingsRequest) {}

  start(clock: Clock, target: LlmTarget, timing: AttemptTiming): StartedProviderAttempt<EmbeddingsAnswer> {
    const { request } = this;
    return startAttempt(clock, target, timing, (http, abort) => {
      const { provider } = target;
      // The route is refused at the door when a target cannot embed: this is only the type's due.
      if (!provider.embed) throw new ResilienceError('invalid_request', `target ${target.label} cannot embed`);
      return provider.embed({
        target: target.target,
        request: { ...request, model: target.target.model },
        http,
        // Made only if the provider asks, as a chat attempt's.
        get signal() {
          return abort.signal;
        },
        timeoutMs: timing.timeoutMs,
      });
    });
  }

  usageOf(answer: EmbeddingsAnswer): ChatUsage {
    const { prompt_tokens, total_tokens } = answer.usage;
    return { prompt_tokens, completion_tokens: 0, total_tokens };
  }

  withUsage(answer: EmbeddingsAnswer, billed: ChatUsage): EmbeddingsAnswer {
    return { ...answer, usage: { prompt_tokens: billed.prompt_tokens, total_tokens: billed.total_tokens } };
  }
}
