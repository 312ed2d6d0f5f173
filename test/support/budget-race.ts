import { estimateInputTokens } from '../../src/llm/pricing';

/**
 * A budget cap in USD that holds `worstCases` worst cases of the LLM request `x0` at once: its
 * input estimate and 1000 output tokens, at $1 per million tokens each way.
 */
export function capForWorstCases(worstCases: number): number {
  const worstUsd =
    (estimateInputTokens({ model: 'chat', messages: [{ role: 'user', content: 'x0' }], max_tokens: 1000 }) + 1000) /
    1e6;
  return Math.round(worstUsd * worstCases * 1e6) / 1e6;
}

/**
 * Sends `count` requests at once, `ask(index)` each. Every answer settles to its HTTP status
 * (200 when it succeeded); a refused request's index goes into `refused` as it is refused.
 */
export function sendAtOnce(
  count: number,
  ask: (index: number) => Promise<unknown>,
): { answers: Array<Promise<number | undefined>>; refused: number[] } {
  const refused: number[] = [];
  const answers = Array.from({ length: count }, (_, index) =>
    ask(index).then(
      () => 200,
      (error: { status?: number }) => {
        refused.push(index);
        return error.status;
      },
    ),
  );
  return { answers, refused };
}
