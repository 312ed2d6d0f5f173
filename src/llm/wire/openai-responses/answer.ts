/*
 * OpenAI's Responses answer, typed once: the `response` object and its output items, as the
 * `/v1/responses` ingress writes them (whole, and piece by piece in its stream's events).
 */

export interface OutputText {
  type: 'output_text';
  text: string;
  annotations: never[];
}

/** A refusal from the model (OpenAI's `ResponseOutputRefusal`): what it said instead of answering. */
export interface OutputRefusal {
  type: 'refusal';
  refusal: string;
}

/** A part of a message's content: its text, or its refusal; an answer may have both, in the order they came. */
export type OutputContentPart = OutputText | OutputRefusal;

export interface MessageOutput {
  type: 'message';
  id: string;
  status: 'in_progress' | 'completed';
  role: 'assistant';
  content: OutputContentPart[];
}

export interface FunctionCallOutput {
  type: 'function_call';
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: 'in_progress' | 'completed';
}

export type OutputItem = MessageOutput | FunctionCallOutput;

/** OpenAI's Responses usage: its `input_tokens` include the cached ones, as Chat Completions' prompt tokens do. */
export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** A `response` object, as `POST /v1/responses` answers and its stream's last event carries. */
export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: 'in_progress' | 'completed' | 'incomplete';
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  error: null;
  model: string;
  output: OutputItem[];
  usage: ResponsesUsage | null;
  [field: string]: unknown;
}
