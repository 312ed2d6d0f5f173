import { randomBytes } from 'node:crypto';
import type { ChatCompletion, ChatUsage, FinishReason } from '../chat.types';
import type { OutputContentPart, OutputItem, ResponseObject, ResponsesRequest, ResponsesUsage } from '../wire';

/**
 * The ids of one response and of its items: its call id, for an operator to find it by, and 128
 * random bits drawn for it. The random part is what makes them safe to keep: a kept response is
 * read back by its id (`previous_response_id`) and an item by its (`item_reference`), and a call
 * id may be the caller's own `X-Call-Id` or a counter, either of which another caller of the
 * tenant (anonymous callers share one) could name. Item ids never take a target's tool-call id
 * (local models answer `call_0` every time), which would make two loops' items one.
 */
export class ResponseIds {
  private readonly key: string;

  constructor(callId: string) {
    this.key = `${callId}_${randomBytes(16).toString('base64url')}`;
  }

  get response(): string {
    return `resp_${this.key}`;
  }

  message(index: number): string {
    return `msg_${this.key}_${index}`;
  }

  /** The item id of the answer's function call at `index` (its place among the answer's tool calls). */
  functionCall(index: number): string {
    return `fc_${this.key}_${index}`;
  }
}

export function responsesUsage(usage: ChatUsage | null | undefined): ResponsesUsage | null {
  if (!usage) return null;
  const reasoning = (usage.completion_tokens_details as { reasoning_tokens?: number } | undefined)?.reasoning_tokens;
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: reasoning ?? 0 },
    total_tokens: usage.total_tokens,
  };
}

/** `incomplete` when the answer was cut (its output cap, or a content filter); else `completed`. */
export function responseStatus(
  finish: FinishReason | null | undefined,
): Pick<ResponseObject, 'status' | 'incomplete_details'> {
  if (finish === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finish === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

/**
 * The response object around `output`: the request's settings echoed as OpenAI echoes them,
 * `store` true when the response is kept (the controller sets it once it decided), and the
 * previous response it continues.
 */
export function responseObject(
  request: ResponsesRequest,
  ids: ResponseIds,
  fields: Pick<ResponseObject, 'created_at' | 'model' | 'output' | 'usage' | 'status' | 'incomplete_details'>,
): ResponseObject {
  return {
    id: ids.response,
    object: 'response',
    ...fields,
    error: null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    metadata: request.metadata ?? {},
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: request.previous_response_id ?? null,
    reasoning: { effort: null, summary: null },
    store: request.store === true,
    temperature: request.temperature ?? null,
    text: { format: request.text?.format ?? { type: 'text' } },
    tool_choice: request.tool_choice ?? 'auto',
    tools: request.tools ?? [],
    top_p: request.top_p ?? null,
    truncation: 'disabled',
    user: request.user ?? null,
  };
}

/**
 * The completion the pipeline served, as the Responses API's output items: its message (its text,
 * then its refusal, the order a replayed stream gives them in), then its function calls.
 */
export function outputItems(completion: ChatCompletion, ids: ResponseIds): OutputItem[] {
  const choice = completion.choices[0];
  const output: OutputItem[] = [];
  const content: OutputContentPart[] = [];
  const text = choice?.message.content;
  if (typeof text === 'string' && text.length > 0) content.push({ type: 'output_text', text, annotations: [] });
  // A refusal is the model's answer too: without its part, the client would see an empty success.
  const refusal = choice?.message.refusal;
  if (typeof refusal === 'string' && refusal.length > 0) content.push({ type: 'refusal', refusal });
  if (content.length > 0) {
    output.push({ type: 'message', id: ids.message(0), status: 'completed', role: 'assistant', content });
  }
  for (const [index, call] of (choice?.message.tool_calls ?? []).entries()) {
    output.push({
      type: 'function_call',
      id: ids.functionCall(index),
      call_id: call.id,
      name: call.function.name,
      arguments: call.function.arguments,
      status: 'completed',
    });
  }
  return output;
}

export function toResponseObject(
  request: ResponsesRequest,
  completion: ChatCompletion,
  ids: ResponseIds,
): ResponseObject {
  return responseObject(request, ids, {
    created_at: completion.created,
    model: completion.model,
    output: outputItems(completion, ids),
    usage: responsesUsage(completion.usage),
    ...responseStatus(completion.choices[0]?.finish_reason),
  });
}
