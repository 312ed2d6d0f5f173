import { parseConfig } from './config.loader';
import { configOf, problemsOf } from '../../test/support/config-results';

/** A document with one LLM route and `prices` as given. */
function document(prices: Record<string, unknown>) {
  return {
    lanes: { main: { concurrency: 1, queueCapacity: 1 } },
    llm: { routes: { chat: { lane: 'main', targets: [{ provider: 'fake', model: 'f' }] } }, prices },
  };
}

describe('config: llm.prices', () => {
  it('keeps a price of input and output alone valid, as before cache rates could be written', () => {
    const config = configOf(parseConfig(document({ 'fake/f': { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } }), {}));

    expect(config.llm.prices['fake/f']).toEqual({ inputPerMTokUsd: 1, outputPerMTokUsd: 2 });
  });

  it('reads a rate for cache reads, 5-minute cache writes and 1-hour cache writes', () => {
    const rates = {
      inputPerMTokUsd: 3,
      outputPerMTokUsd: 15,
      cachedInputPerMTokUsd: 0.3,
      cacheWriteInputPerMTokUsd: 3.75,
      cacheWrite1hInputPerMTokUsd: 6,
    };

    expect(
      configOf(parseConfig(document({ 'anthropic/claude-x': rates }), {})).llm.prices['anthropic/claude-x'],
    ).toEqual(rates);
  });

  it.each([
    ['cacheWriteInputPerMTokUsd', -1],
    ['cacheWrite1hInputPerMTokUsd', 'dear'],
    ['cacheWrite1hInputPerMTokUsd', 20_000],
  ])('names a %s of %p as a problem', (field, value) => {
    const problems = problemsOf(
      parseConfig(document({ 'fake/f': { inputPerMTokUsd: 1, outputPerMTokUsd: 2, [field]: value } }), {}),
    );

    expect(problems.join('\n')).toContain(`llm.prices.fake/f.${field}`);
  });

  it('names a cache rate it does not know, not silently dropping it', () => {
    const problems = problemsOf(
      parseConfig(document({ 'fake/f': { inputPerMTokUsd: 1, outputPerMTokUsd: 2, cacheWrite5mPerMTokUsd: 1 } }), {}),
    );

    expect(problems.join('\n')).toMatch(/cacheWrite5mPerMTokUsd/);
  });
});
