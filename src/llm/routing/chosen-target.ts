import type { FailoverProgress } from './attempt-race';
import type { LlmTarget } from './llm-route';
import type { ChoiceReason } from './target-strategy';

/**
 * The target that served a request (the last one tried when none did) and why its route chose
 * it, for the request's log line; undefined when no target was reached (a cache hit, a refusal
 * before the first attempt).
 */
export function chosenTarget(progress: FailoverProgress): { target: LlmTarget; reason: ChoiceReason } | undefined {
  const { tried, choices } = progress;
  let target: LlmTarget | undefined;
  for (let i = tried.length - 1; i >= 0 && !target; i--) if (tried[i]!.outcome === 'ok') target = tried[i]!.target;
  target ??= tried.at(-1)?.target;
  if (!target) return undefined;
  for (let i = choices.length - 1; i >= 0; i--) {
    const { target: chosen, reason } = choices[i]!;
    if (chosen === target && reason !== 'context_window') return { target, reason };
  }
  return undefined;
}
