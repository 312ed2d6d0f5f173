import { CALL_ID_PARAMETER, IDEMPOTENCY_KEY_PARAMETER, LLM_ANSWER_HEADERS } from '../headers';
import type { RouteDoc } from '../route-doc';
import { chatCompletionStreamSchema } from '../schemas/chat.schemas';

/** The OpenAI-compatible LLM route. */
export const LLM_ROUTES: RouteDoc[] = [
  {
    group: 'llm',
    method: 'post',
    path: '/v1/chat/completions',
    operationId: 'createChatCompletion',
    tag: 'llm',
    summary: "OpenAI's Chat Completions, with failover, hedging, caching and budgets",
    description:
      '`model` names a route of `llm.routes`. With `stream: true` the answer is `text/event-stream`: the status ' +
      "and headers go out with a target's first content event (the commit point); a failure before it is an " +
      "ordinary JSON error answer. Errors carry OpenAI's `type`, `code` and `param` besides the envelope's fields. " +
      '`Cache-Control: no-cache` bypasses the cache.',
    auth: 'apiKey',
    parameters: [CALL_ID_PARAMETER, IDEMPOTENCY_KEY_PARAMETER],
    body: { schema: 'ChatCompletionRequest', required: true },
    answer: {
      description: 'A `chat.completion` with the `bulkhead` field, or its stream of chunks.',
      content: { 'application/json': 'ChatCompletion', 'text/event-stream': chatCompletionStreamSchema },
      headers: LLM_ANSWER_HEADERS,
    },
    errors: [400, 401, 402, 403, 404, 413, 422, 429, 500, 502, 503, 504],
  },
];
