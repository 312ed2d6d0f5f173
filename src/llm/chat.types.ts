/**
 * The OpenAI Chat Completions wire format, as far as Bulkhead reads it. A request is kept as the
 * client sent it (fields Bulkhead does not know pass through to OpenAI-compatible targets);
 * an answer is what every provider turns its own answer into.
 */

export type ChatRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

/** A content part of a message; only text parts are translated for non-OpenAI providers. */
export interface ChatContentPart {
  type: string;
  text?: string;
  [field: string]: unknown;
}

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: ChatRole;
  content: string | ChatContentPart[] | null;
  name?: string;
  /** Assistant messages: the tools it called. */
  tool_calls?: ChatToolCall[];
  /** Tool messages: the call they answer. */
  tool_call_id?: string;
  [field: string]: unknown;
}

export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export type ChatToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

/** A validated request: `model` names a route of `llm.routes`, `messages` has at least one. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  stop?: string | string[];
  tools?: ChatTool[];
  tool_choice?: ChatToolChoice;
  parallel_tool_calls?: boolean;
  n?: number;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean; [field: string]: unknown } | null;
  user?: string;
  [field: string]: unknown;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: {
    cached_tokens?: number;
    /** Prompt tokens written to the provider's prompt cache (Anthropic's `cache_creation_input_tokens`). */
    cache_write_tokens?: number;
    /**
     * Of `cache_write_tokens`, those written for an hour (Anthropic's
     * `cache_creation.ephemeral_1h_input_tokens`), the rest for 5 minutes; present only when the
     * provider said how long.
     */
    cache_write_1h_tokens?: number;
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

export interface ChatChoice {
  index: number;
  message: { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[]; refusal?: string | null };
  finish_reason: FinishReason;
  logprobs: null;
}

/** A `chat.completion` object: every provider's answer, translated. */
export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  /** Unix seconds. */
  created: number;
  /** The provider's model that served (not the route's name). */
  model: string;
  choices: ChatChoice[];
  usage: ChatUsage;
  /**
   * The target's answer in the client's own wire format, for a request it was sent as the client
   * sent it (`ChatCall.passThrough`): what the client's ingress answers with instead of a
   * translation (Anthropic's `message`, thinking blocks and all, for `/v1/messages`).
   */
  passThroughAnswer?: Record<string, unknown>;
  [field: string]: unknown;
}

/** What one chunk adds to a choice of a streamed answer. */
export interface ChatDelta {
  role?: 'assistant';
  content?: string | null;
  refusal?: string | null;
  /** Tool calls arrive in pieces: `index` says which; `id`, `type` and the name come with the first. */
  tool_calls?: Array<{
    index: number;
    id?: string;
    type?: 'function';
    function?: { name?: string; arguments?: string };
  }>;
  [field: string]: unknown;
}

export interface ChatChunkChoice {
  index: number;
  delta: ChatDelta;
  finish_reason: FinishReason | null;
  logprobs: null;
}

/**
 * A `chat.completion.chunk`: one event of a streamed answer, what every provider's stream is
 * turned into. The usage chunk (`stream_options.include_usage`) has no choices and a `usage`.
 */
export interface ChatChunk {
  id: string;
  object: 'chat.completion.chunk';
  /** Unix seconds. */
  created: number;
  model: string;
  choices: ChatChunkChoice[];
  usage?: ChatUsage | null;
  /**
   * A pass-through stream (the target answered in the client's own wire format): the event this
   * chunk was read from, which the client's ingress streams as it came. An event that says nothing
   * in Chat Completions' terms (thinking, a ping) comes in a chunk with no choices.
   */
  passThroughEvent?: PassThroughEvent;
  /** The last chunk of a pass-through stream: the whole answer its events add up to. */
  passThroughAnswer?: Record<string, unknown>;
  [field: string]: unknown;
}

/** One event of a typed stream (Anthropic's Messages, OpenAI's Responses), parsed: `{ type: 'content_block_delta', … }`. */
export interface WireEvent {
  type: string;
  [field: string]: unknown;
}

/** One event of Anthropic's stream, parsed. */
export type AnthropicStreamEvent = WireEvent;

/**
 * A request as its client sent it, in a wire format other than Chat Completions, beside the Chat
 * Completions request the pipeline runs: what a target that speaks that format itself is sent,
 * nearly as it came (the pass-through pair: the same format on both sides), so that what a
 * translation would lose reaches the model. Any other target is sent the translation. The route
 * carries it without reading it: only the ingress that made it and the providers that speak its
 * format do.
 */
export interface PassThroughRequest {
  /**
   * The wire format of `body`: Anthropic's Messages API (`anthropic` and `bedrock` targets speak
   * it), or OpenAI's Responses API (`openai` targets whose `responsesApi` says they serve it).
   */
  readonly format: 'anthropic-messages' | 'openai-responses';
  /**
   * The client's validated body, without `model` and `stream`: the target's model and the
   * attempt's way of answering are set per attempt.
   */
  readonly body: Readonly<Record<string, unknown>>;
  /** Feature flags the format sends in a header (Anthropic's `anthropic-beta`), passed on. */
  readonly betas: readonly string[];
  /**
   * Input tokens the Chat Completions request does not show its estimate: the text of earlier
   * turns' thinking blocks, which the model reads again in a tool loop.
   */
  readonly extraInputTokens: number;
}

/** One event of a pass-through stream, with what the route needs to know of it without reading it. */
export interface PassThroughEvent {
  /** The event as the target sent it. */
  readonly event: WireEvent;
  /** Whether it carries some of the answer (any content, thinking too): the commit point. */
  readonly content: boolean;
  /** Characters of output it carries that no choice shows (thinking), which the target bills. */
  readonly hiddenOutputChars: number;
}
