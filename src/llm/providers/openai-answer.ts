import { compileRequestCheck } from '../../common';
import type { ChatCompletion } from '../chat.types';
import { openAiChatAnswer } from '../wire';
import { isCount } from './json-shape';
import type { ProviderTarget } from './llm-provider';
import { malformedAnswerError } from './provider-errors';

/** The wire's check of a whole answer, compiled once. */
const isChatAnswer = compileRequestCheck(openAiChatAnswer);

/**
 * An OpenAI-compatible `chat.completion` as given, once it has the wire's shape for what the route
 * reads (choices with a message, usage); a choice's index, `created`, `model` and `total_tokens`
 * filled in where missing. Anything else is the malformed answer.
 *
 * @param wallNowMs the clock's wall time: `created` of an answer that has none
 */
export function readOpenAiAnswer(target: ProviderTarget, answer: unknown, wallNowMs: number): ChatCompletion {
  if (!isChatAnswer(answer)) throw malformedAnswerError(target, 200);
  const { usage } = answer;
  return {
    ...answer,
    object: 'chat.completion',
    choices: answer.choices.map((choice, at) => (choice.index === undefined ? { ...choice, index: at } : choice)),
    created: isCount(answer.created) ? answer.created : Math.floor(wallNowMs / 1000),
    model: typeof answer.model === 'string' ? answer.model : target.model,
    usage: { ...usage, total_tokens: usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens },
    // The wire's types are what may come (nulls included); the route reads them as such.
  } as unknown as ChatCompletion;
}
