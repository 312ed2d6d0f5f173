import type { LazyAbortController } from '../../common';
import { AttemptHttp, type HttpPool } from '../../containment';
import type { ChatCall } from '../chat-call';
import { estimateInputTokens } from '../pricing';
import type { LlmRoute } from '../routing/llm-route';

/** A request's input tokens, and who counted them: a target (`provider/model`), or `estimate`. */
export interface InputTokenCount {
  tokens: number;
  countedBy: string;
}

/**
 * `count_tokens`: the route's first target counts the request itself where its provider can
 * (Anthropic's endpoint, free of charge), through the caller's pool, while its breaker lets the
 * tenant through; else, or when that fails, Bulkhead's own estimate (the upper bound its limits
 * and budgets hold). The first target is the one whose count matters: the one a request goes to.
 */
export async function countInputTokens(
  route: LlmRoute,
  { request, passThrough }: Pick<ChatCall, 'request' | 'passThrough'>,
  caller: { tenant: string; pool: HttpPool; abort: LazyAbortController },
): Promise<InputTokenCount> {
  const first = route.targets[0];
  if (first?.provider.countTokens && !first.breaker.refusal(caller.tenant)) {
    const { abort } = caller;
    try {
      const tokens = await first.provider.countTokens({
        target: first.target,
        request: { ...request, model: first.target.model },
        passThrough,
        // Not an answer: the count ignores the output, but a body with thinking must still
        // leave room for its budget to be valid (Bedrock's count takes the InvokeModel body).
        maxOutputTokens: thinkingBudget(passThrough) + 1,
        http: new AttemptHttp(caller.pool, abort),
        get signal() {
          return abort.signal;
        },
        timeoutMs: first.timeoutMs,
      });
      return { tokens, countedBy: first.label };
    } catch {
      // Counting is advice: the estimate answers instead, and says so.
    }
  }
  return { tokens: estimateInputTokens(request) + (passThrough?.extraInputTokens ?? 0), countedBy: 'estimate' };
}

/** The thinking budget of a request as it came (`thinking.budget_tokens`), else 0. */
function thinkingBudget(passThrough: ChatCall['passThrough']): number {
  const thinking = passThrough?.body.thinking as { budget_tokens?: unknown } | undefined;
  const budget = thinking?.budget_tokens;
  return typeof budget === 'number' && Number.isSafeInteger(budget) && budget > 0 ? budget : 0;
}
