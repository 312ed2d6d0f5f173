import { z } from 'zod';
import { CALL_ID_PARAMETER, IDEMPOTENCY_KEY_PARAMETER, LLM_ANSWER_HEADERS, pathName } from '../headers';
import type { RouteDoc } from '../route-doc';
import { chatCompletionStreamSchema } from '../schemas/chat.schemas';
import { messagesStreamSchema, responsesStreamSchema } from '../schemas/llm-ingress.schemas';

/** The OpenAI-compatible LLM route, and the routes as models. */
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
  {
    group: 'llm',
    method: 'post',
    path: '/v1/embeddings',
    operationId: 'createEmbeddings',
    tag: 'llm',
    summary: "OpenAI's embeddings, with failover, caching and budgets",
    description:
      '`model` names a route of `llm.routes` whose targets embed (`openai` and compatible, `bedrock` Titan and ' +
      'Cohere embeddings models); a route with a target that cannot is refused with 400. Each attempt holds the ' +
      "inputs' token estimate at the target's input price and is charged the provider's `prompt_tokens`. " +
      '`Cache-Control: no-cache` bypasses the cache.',
    auth: 'apiKey',
    parameters: [CALL_ID_PARAMETER, IDEMPOTENCY_KEY_PARAMETER],
    body: { schema: 'EmbeddingsRequest', required: true },
    answer: {
      description: 'A `list` of `embedding`s, one per input in order, with the `bulkhead` field.',
      content: { 'application/json': 'Embeddings' },
      headers: LLM_ANSWER_HEADERS,
    },
    errors: [400, 401, 402, 403, 404, 413, 422, 429, 500, 502, 503, 504],
  },
  {
    group: 'llm',
    method: 'get',
    path: '/v1/models',
    operationId: 'listModels',
    tag: 'llm',
    summary: "The LLM routes the caller's tenant may use, as models",
    description:
      "OpenAI's list shape; Anthropic's (paged by `limit`, `after_id`, `before_id`) when the request carries " +
      "`anthropic-version`, as Anthropic's SDKs send it.",
    auth: 'apiKey',
    parameters: [
      {
        name: 'limit',
        in: 'query',
        description: "Anthropic's page size. Default 20.",
        schema: z.int().min(1).max(1000),
      },
      { name: 'after_id', in: 'query', description: "Anthropic's: the page after this model.", schema: z.string() },
      { name: 'before_id', in: 'query', description: "Anthropic's: the page before this model.", schema: z.string() },
    ],
    answer: { description: "The routes, in the config's order.", content: { 'application/json': 'ModelList' } },
    errors: [400, 401, 403, 500],
  },
  {
    group: 'llm',
    method: 'get',
    path: '/v1/models/{id}',
    operationId: 'retrieveModel',
    tag: 'llm',
    summary: 'One LLM route as a model',
    description: 'A route the tenant may not use is `404`, exactly as one that does not exist.',
    auth: 'apiKey',
    parameters: [pathName('id', "The route's name.")],
    answer: { description: 'The route.', content: { 'application/json': 'Model' } },
    errors: [401, 403, 404, 500],
  },
  {
    group: 'llm',
    method: 'post',
    path: '/v1/messages',
    operationId: 'createMessage',
    tag: 'llm',
    summary: "Anthropic's Messages API, over the same pipeline as the chat route",
    description:
      '`model` names a route of `llm.routes`; `max_tokens` is required. The request is translated into the Chat ' +
      'Completions request the route runs (any target serves it), and its answer back. With `stream: true` the ' +
      "answer is Anthropic's event stream, from the same commit point. Errors are Anthropic's shape. The key may " +
      'come as `x-api-key`.',
    auth: 'apiKey',
    parameters: [CALL_ID_PARAMETER, IDEMPOTENCY_KEY_PARAMETER],
    body: { schema: 'MessagesRequest', required: true },
    answer: {
      description: 'A `message` with the `bulkhead` field, or its stream of events.',
      content: { 'application/json': 'Message', 'text/event-stream': messagesStreamSchema },
      headers: LLM_ANSWER_HEADERS,
    },
    errors: [400, 401, 402, 403, 404, 413, 422, 429, 500, 504, 529],
    anthropicErrors: true,
  },
  {
    group: 'llm',
    method: 'post',
    path: '/v1/messages/count_tokens',
    operationId: 'countMessageTokens',
    tag: 'llm',
    summary: "A Messages request's input tokens, as the route's first target or Bulkhead counts them",
    description:
      "The route's first target counts where it can (an `anthropic` target's own `count_tokens`); else Bulkhead's " +
      'estimate, the one its rate limits and budgets hold. `x-bulkhead-token-count` says which: the target, or ' +
      '`estimate`.',
    auth: 'apiKey',
    body: { schema: 'CountTokensRequest', required: true },
    answer: { description: 'The count.', content: { 'application/json': 'MessageTokensCount' } },
    errors: [400, 401, 403, 404, 500],
    anthropicErrors: true,
  },
  {
    group: 'llm',
    method: 'post',
    path: '/v1/responses',
    operationId: 'createResponse',
    tag: 'llm',
    summary: "OpenAI's Responses API over the same pipeline as the chat route",
    description:
      '`model` names a route of `llm.routes`. The request is translated into the Chat Completions request the ' +
      'route runs (any target serves it), and its answer back. With `stream: true` the answer is the typed event ' +
      'stream, from the same commit point. Answers are kept (`store` true or absent, llm.responses.stored) per tenant ' +
      "for `previous_response_id` and `item_reference`; an id not kept is OpenAI's `400`. `conversation` and " +
      'built-in tools are refused (`400`).',
    auth: 'apiKey',
    parameters: [CALL_ID_PARAMETER, IDEMPOTENCY_KEY_PARAMETER],
    body: { schema: 'ResponsesRequest', required: true },
    answer: {
      description: 'A `response` with the `bulkhead` field, or its stream of events.',
      content: { 'application/json': 'Response', 'text/event-stream': responsesStreamSchema },
      headers: LLM_ANSWER_HEADERS,
    },
    errors: [400, 401, 402, 403, 404, 413, 422, 429, 500, 502, 503, 504],
  },
];
