import type { ChatRequest } from '../chat.types';

/**
 * The parameters OpenAI's reasoning models refuse (400 "Unsupported parameter", or "Unsupported
 * value" for a temperature or top_p other than the default 1): the sampling ones, whose default
 * is then the only value the model takes, and `stop` (gpt-5, o3, o4-mini: "'stop' is not
 * supported with this model"), without which the answer runs to its own end.
 */
export const REASONING_REFUSED_PARAMETERS = [
  'temperature',
  'top_p',
  'presence_penalty',
  'frequency_penalty',
  'logprobs',
  'top_logprobs',
  'logit_bias',
  'stop',
] as const;

// o1, o3-mini, o4-mini-2025-04-16, o3-pro: the o-series, whatever follows a dash.
const O_SERIES = /^o[1-9]\d*(?:-|$)/;
// gpt-5, gpt-5-mini, gpt-5.1-codex, gpt-6: GPT 5 and later, each a reasoning model.
const GPT_VERSION = /^gpt-(\d+)(?:\.\d+)?(?:-|$)/;
// gpt-5-chat-latest is the one GPT-5 that does not reason (the model behind ChatGPT's chat).
const GPT_5_CHAT = /^gpt-5-chat(?:-|$)/;

/**
 * Whether `model` is one of OpenAI's reasoning models, by its id: the o-series (o1, o3, o4-mini,
 * ...) and GPT-5 and later, but `gpt-5-chat-latest`. A target's `reasoning` setting overrides it
 * (a compatible server that names its models otherwise, or a model this rule does not know).
 */
export function isReasoningModel(model: string): boolean {
  if (O_SERIES.test(model)) return true;
  const gpt = GPT_VERSION.exec(model);
  return gpt !== null && Number(gpt[1]) >= 5 && !GPT_5_CHAT.test(model);
}

/** A request a reasoning model takes, and the names of what was left out for it. */
export interface ReasoningRequest {
  request: ChatRequest;
  /** In {@link REASONING_REFUSED_PARAMETERS}' order; empty when nothing was. */
  dropped: string[];
}

/**
 * `request` without the parameters a reasoning model refuses. They are dropped, not refused:
 * a route may fail over from a gpt-4o target that honours `temperature` to an o3 target that
 * cannot, and the client's request is right for the first. A request without any of them is
 * returned as it is.
 */
export function forReasoningModel(request: ChatRequest): ReasoningRequest {
  const dropped = REASONING_REFUSED_PARAMETERS.filter((parameter) => request[parameter] !== undefined);
  if (dropped.length === 0) return { request, dropped };
  const kept: ChatRequest = { ...request };
  for (const parameter of dropped) delete kept[parameter];
  return { request: kept, dropped };
}
