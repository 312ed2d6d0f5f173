import fc from 'fast-check';
import type { ChatUsage } from '../chat.types';
import { costMicros, type Price, worstCaseMicros } from '../pricing';
import { billedUsage, type UsageBounds } from './billed-usage';

const BOUNDS: UsageBounds = { promptTokens: 1_000, completionTokens: 500 };

function usage(prompt: unknown, completion: unknown, details?: Record<string, unknown>): ChatUsage {
  return {
    prompt_tokens: prompt as number,
    completion_tokens: completion as number,
    total_tokens: (prompt as number) + (completion as number),
    ...(details ? { prompt_tokens_details: details } : {}),
  };
}

describe('billedUsage', () => {
  it('takes sane usage as given, the same object, split by what each token is priced as', () => {
    const given = usage(800, 100, { cached_tokens: 300, cache_write_tokens: 200, cache_write_1h_tokens: 50 });

    const billed = billedUsage(given, BOUNDS);

    expect(billed.usage).toBe(given);
    expect(billed.rejections).toEqual([]);
    expect(billed.tokens).toEqual({
      inputTokens: 300,
      cachedInputTokens: 300,
      cacheWriteInputTokens: 150,
      cacheWrite1hInputTokens: 50,
      outputTokens: 100,
    });
  });

  it('takes the estimate and the cap exactly: only more is above them', () => {
    expect(billedUsage(usage(1_000, 500), BOUNDS).rejections).toEqual([]);
  });

  it.each([
    ['a negative prompt', usage(-5, 100), 'prompt_tokens', 'negative', { inputTokens: 1_000, outputTokens: 100 }],
    [
      'an absurd completion',
      usage(800, 1e308),
      'completion_tokens',
      'above_bound',
      { inputTokens: 800, outputTokens: 500 },
    ],
    [
      'an infinite prompt',
      usage(Infinity, 100),
      'prompt_tokens',
      'not_finite',
      { inputTokens: 1_000, outputTokens: 100 },
    ],
    [
      'NaN of completion',
      usage(800, Number.NaN),
      'completion_tokens',
      'not_finite',
      { inputTokens: 800, outputTokens: 500 },
    ],
    ['a fraction', usage(800.2, 100), 'prompt_tokens', 'not_integer', { inputTokens: 801, outputTokens: 100 }],
    ['a string', usage('800', 100), 'prompt_tokens', 'not_a_number', { inputTokens: 1_000, outputTokens: 100 }],
    [
      'a prompt past the estimate',
      usage(1_001, 100),
      'prompt_tokens',
      'above_bound',
      { inputTokens: 1_000, outputTokens: 100 },
    ],
  ])('bounds %s, and says which count and why', (_what, given, field, reason, tokens) => {
    const billed = billedUsage(given, BOUNDS);

    expect(billed.rejections).toEqual([{ field, reason }]);
    expect(billed.tokens).toMatchObject(tokens);
    expect(billed.usage).toMatchObject({
      prompt_tokens: tokens.inputTokens,
      completion_tokens: tokens.outputTokens,
      total_tokens: tokens.inputTokens + tokens.outputTokens,
    });
  });

  it('takes cache reads within the prompt, and an unreadable read as none (a read is a discount)', () => {
    expect(billedUsage(usage(800, 0, { cached_tokens: 9e15 }), BOUNDS)).toMatchObject({
      tokens: { inputTokens: 0, cachedInputTokens: 800 },
      rejections: [{ field: 'cached_tokens', reason: 'above_bound' }],
    });
    expect(billedUsage(usage(800, 0, { cached_tokens: -800 }), BOUNDS)).toMatchObject({
      tokens: { inputTokens: 800, cachedInputTokens: 0 },
      usage: { prompt_tokens_details: { cached_tokens: 0 } },
      rejections: [{ field: 'cached_tokens', reason: 'negative' }],
    });
  });

  it('takes an unreadable cache write as every prompt token not read (a write costs more than input)', () => {
    const billed = billedUsage(usage(800, 0, { cached_tokens: 300, cache_write_tokens: '500' }), BOUNDS);

    expect(billed.tokens).toMatchObject({ inputTokens: 0, cachedInputTokens: 300, cacheWriteInputTokens: 500 });
    expect(billed.rejections).toEqual([{ field: 'cache_write_tokens', reason: 'not_a_number' }]);
  });

  it('takes hour-long writes within the writes, and unreadable ones as all of them', () => {
    expect(billedUsage(usage(800, 0, { cache_write_tokens: 100, cache_write_1h_tokens: 400 }), BOUNDS)).toMatchObject({
      tokens: { inputTokens: 700, cacheWriteInputTokens: 0, cacheWrite1hInputTokens: 100 },
      rejections: [{ field: 'cache_write_1h_tokens', reason: 'above_bound' }],
    });
    expect(billedUsage(usage(800, 0, { cache_write_tokens: 100, cache_write_1h_tokens: -1 }), BOUNDS)).toMatchObject({
      tokens: { cacheWriteInputTokens: 0, cacheWrite1hInputTokens: 100 },
    });
  });

  it('reads a cache count that is null as none, as some OpenAI-compatible servers send it', () => {
    const given = usage(800, 100, { cached_tokens: null, cache_write_tokens: null, cache_write_1h_tokens: null });

    expect(billedUsage(given, BOUNDS)).toMatchObject({ usage: given, tokens: { inputTokens: 800 }, rejections: [] });
  });

  it('leaves out of the billed usage the cache counts the provider did not report', () => {
    const billed = billedUsage(usage(-5, 100, { cached_tokens: 0 }), BOUNDS);

    expect(billed.usage.prompt_tokens_details).toEqual({ cached_tokens: 0 });
    expect(billedUsage(usage(-5, 100), BOUNDS).usage).not.toHaveProperty('prompt_tokens_details');
  });

  it('never charges past the hold, whatever the counts (property)', () => {
    const count = fc.oneof(
      fc.integer({ min: 0, max: 2_000 }),
      fc.double(),
      fc.constantFrom(-5, 1e308, 2 ** 53, Infinity, -Infinity, Number.NaN, -0),
      fc.constantFrom('7', null, true, {}, []),
    );
    const rate = fc.integer({ min: 0, max: 1e9 });
    const price = fc.record({
      inputMicrosPerMTok: rate,
      cachedInputMicrosPerMTok: rate,
      cacheWriteInputMicrosPerMTok: rate,
      cacheWrite1hInputMicrosPerMTok: rate,
      outputMicrosPerMTok: rate,
    });
    fc.assert(
      fc.property(
        price,
        fc.record({
          promptTokens: fc.integer({ min: 0, max: 1e6 }),
          completionTokens: fc.integer({ min: 0, max: 1e6 }),
        }),
        count,
        count,
        fc.option(fc.record({ cached_tokens: count, cache_write_tokens: count, cache_write_1h_tokens: count }), {
          nil: undefined,
        }),
        (price: Price, bounds, prompt, completion, details) => {
          const { tokens, usage: billed } = billedUsage(usage(prompt, completion, details), bounds);

          const counts = Object.values(tokens) as number[];
          for (const n of counts) expect(Number.isSafeInteger(n) && n >= 0).toBe(true);
          expect(costMicros(price, tokens)).toBeLessThanOrEqual(
            worstCaseMicros(price, bounds.promptTokens, bounds.completionTokens),
          );
          expect(billed.prompt_tokens).toBeLessThanOrEqual(bounds.promptTokens);
          expect(billed.completion_tokens).toBeLessThanOrEqual(bounds.completionTokens);
          expect(billed.total_tokens).toBe(billed.prompt_tokens + billed.completion_tokens);
        },
      ),
      { numRuns: 500 },
    );
  });
});
