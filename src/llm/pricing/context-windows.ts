import { withoutDateSuffix } from './model-id';

/**
 * Context windows of known models, in tokens of input and output together, by
 * `provider/model` (matched as prices are: the exact id, else its family without a date
 * suffix). Only models whose window is published and settled; any other target has none unless
 * its config gives `contextWindow`, and is then never passed over for a request's size.
 */
const CONTEXT_WINDOWS: ReadonlyMap<string, number> = new Map([
  ['openai/gpt-4o', 128_000],
  ['openai/gpt-4o-mini', 128_000],
  ['openai/chatgpt-4o-latest', 128_000],
  ['openai/gpt-4.1', 1_047_576],
  ['openai/gpt-4.1-mini', 1_047_576],
  ['openai/gpt-4.1-nano', 1_047_576],
  ['openai/o1', 200_000],
  ['openai/o3', 200_000],
  ['openai/o3-mini', 200_000],
  ['openai/o4-mini', 200_000],
  ['openai/gpt-5', 400_000],
  ['openai/gpt-5-mini', 400_000],
  ['openai/gpt-5-nano', 400_000],
  ['anthropic/claude-3-haiku', 200_000],
  ['anthropic/claude-3-opus', 200_000],
  ['anthropic/claude-3-5-haiku', 200_000],
  ['anthropic/claude-3-5-sonnet', 200_000],
  ['anthropic/claude-3-7-sonnet', 200_000],
  ['anthropic/claude-sonnet-4', 200_000],
  ['anthropic/claude-opus-4', 200_000],
  ['anthropic/claude-opus-4-1', 200_000],
  ['anthropic/claude-sonnet-4-5', 200_000],
  ['anthropic/claude-haiku-4-5', 200_000],
  ['anthropic/claude-opus-4-5', 200_000],
]);

/** The context window of `model` at `provider`: `configured` if given, else the table's, else undefined. */
export function contextWindowOf(provider: string, model: string, configured?: number): number | undefined {
  if (configured !== undefined) return configured;
  const exact = CONTEXT_WINDOWS.get(`${provider}/${model}`);
  if (exact !== undefined) return exact;
  const family = withoutDateSuffix(model);
  return family === undefined ? undefined : CONTEXT_WINDOWS.get(`${provider}/${family}`);
}
