import { openaiAnswer } from './llm-answers';
import { openaiChunks, streamed } from './sse';
import { json, type UpstreamHandler } from './upstream';

/** OpenAI's 400 body: `invalid_request_error`, naming the parameter. */
function refusal(message: string, param: string, code: string): UpstreamHandler {
  return json(400, { error: { message, type: 'invalid_request_error', param, code } });
}

/** The parameters a reasoning model takes only at their defaults (none: not at all), and those defaults. */
const REASONING_DEFAULTS: Record<string, unknown> = {
  temperature: 1,
  top_p: 1,
  presence_penalty: 0,
  frequency_penalty: 0,
  logprobs: false,
  logit_bias: undefined,
  top_logprobs: undefined,
  stop: undefined,
};

/** What the checking server answers when the request passes. */
export interface CheckedAnswer {
  text: string;
  model: string;
}

/**
 * A Chat Completions server that refuses what OpenAI's API refuses, with its 400 body: both
 * output caps together (every model); `max_tokens` from a reasoning model; a sampling parameter
 * other than its default (or `stop`) from a reasoning model. With `onlyMaxTokens`, a compatible server that
 * knows `max_tokens` alone and refuses `max_completion_tokens` as an unknown argument. A request
 * that passes gets `answer`, streamed when it asked for a stream.
 */
export function openAiParameterChecks(
  answer: CheckedAnswer,
  options: { reasoning: boolean; onlyMaxTokens?: boolean },
): UpstreamHandler {
  return async (request, response) => {
    const body = JSON.parse(request.body) as Record<string, unknown>;
    const refused = refusalOf(body, options);
    if (refused) return refused(request, response);
    if (body.stream === true) {
      return streamed(openaiChunks(answer.text.split(/(?<= )/), { model: answer.model }))(request, response);
    }
    return json(200, openaiAnswer(answer.text, undefined, answer.model))(request, response);
  };
}

function refusalOf(
  body: Record<string, unknown>,
  options: { reasoning: boolean; onlyMaxTokens?: boolean },
): UpstreamHandler | undefined {
  if (options.onlyMaxTokens && 'max_completion_tokens' in body) {
    return refusal(
      'Unrecognized request argument supplied: max_completion_tokens',
      'max_completion_tokens',
      'unknown_parameter',
    );
  }
  if ('max_tokens' in body && 'max_completion_tokens' in body) {
    return refusal(
      'max_tokens and max_completion_tokens cannot both be set. Please use max_completion_tokens.',
      'max_tokens',
      'invalid_value',
    );
  }
  if (!options.reasoning) return undefined;
  if ('max_tokens' in body) {
    return refusal(
      "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      'max_tokens',
      'unsupported_parameter',
    );
  }
  for (const [param, fallback] of Object.entries(REASONING_DEFAULTS)) {
    if (!(param in body) || body[param] === fallback) continue;
    return param === 'temperature' || param === 'top_p'
      ? refusal(
          `Unsupported value: '${param}' does not support ${JSON.stringify(body[param])} with this model. Only the default (1) value is supported.`,
          param,
          'unsupported_value',
        )
      : refusal(`Unsupported parameter: '${param}' is not supported with this model.`, param, 'unsupported_parameter');
  }
  return undefined;
}
