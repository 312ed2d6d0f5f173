import { PriceTable } from './price-table';
import type { ShippedPrices } from './shipped-price';

const SHIPPED: ShippedPrices = {
  takenOn: '2026-12-01',
  source: 'test',
  prices: [
    { provider: 'openai', model: 'gpt-4o', inputPerMTokUsd: 2.5, cachedInputPerMTokUsd: 1.25, outputPerMTokUsd: 10 },
    { provider: 'openai', model: 'gpt-4o-2024-05-13', inputPerMTokUsd: 5, outputPerMTokUsd: 15 },
    { provider: 'openai', model: 'gpt-4o-mini', inputPerMTokUsd: 0.15, outputPerMTokUsd: 0.6 },
    {
      provider: 'openai',
      model: 'gpt-5.4',
      inputPerMTokUsd: 2.5,
      outputPerMTokUsd: 15,
      longContext: { fromInputTokens: 272_000, inputPerMTokUsd: 5, outputPerMTokUsd: 22.5 },
    },
    {
      provider: 'anthropic',
      model: 'claude-3-7-sonnet',
      aliases: ['claude-3-7-sonnet-latest'],
      inputPerMTokUsd: 3,
      outputPerMTokUsd: 15,
    },
    { provider: 'anthropic', model: 'claude-sonnet-4-5', inputPerMTokUsd: 3, outputPerMTokUsd: 15 },
  ],
};

const table = (overrides = {}) => new PriceTable(overrides, SHIPPED);
const inputRate = (t: PriceTable, provider: string, model: string) => t.priceOf(provider, model)?.inputMicrosPerMTok;

describe('PriceTable', () => {
  it('prices a shipped model by its exact id, in micro-dollars per million tokens', () => {
    expect(table().priceOf('openai', 'gpt-4o')).toEqual({
      inputMicrosPerMTok: 2_500_000,
      cachedInputMicrosPerMTok: 1_250_000,
      cacheWriteInputMicrosPerMTok: 2_500_000,
      cacheWrite1hInputMicrosPerMTok: 2_500_000,
      outputMicrosPerMTok: 10_000_000,
    });
  });

  it('prices a dated snapshot as its family', () => {
    const t = table();
    expect(t.priceOf('anthropic', 'claude-sonnet-4-5-20250929')).toBe(t.priceOf('anthropic', 'claude-sonnet-4-5'));
    expect(t.priceOf('openai', 'gpt-4o-2024-08-06')).toBe(t.priceOf('openai', 'gpt-4o'));
    expect(t.priceOf('anthropic', 'claude-3-7-sonnet-20250219')).toBe(t.priceOf('anthropic', 'claude-3-7-sonnet'));
  });

  it('prices a snapshot with a row of its own by that row, not its family', () => {
    expect(inputRate(table(), 'openai', 'gpt-4o-2024-05-13')).toBe(5_000_000);
  });

  it('prices an alias as its row', () => {
    const t = table();
    expect(t.priceOf('anthropic', 'claude-3-7-sonnet-latest')).toBe(t.priceOf('anthropic', 'claude-3-7-sonnet'));
  });

  it.each([
    ['openai', 'gpt-4o-mini-tts', 'a priced id is only its prefix'],
    ['openai', 'gpt-4', 'a priced id starts with it'],
    ['openai', 'GPT-4o', 'ids are compared as written'],
    ['openai', 'gpt-4o-2024-13-01', 'the suffix is not a date'],
    ['anthropic', 'claude-sonnet-4-5-latest', 'not a listed alias'],
    ['anthropic', 'gpt-4o', 'another provider prices it'],
    ['openai', 'claude-sonnet-4-5', 'another provider prices it'],
    ['fake', 'echo', 'fake models are not shipped'],
    ['bedrock', 'anything', 'an unknown provider'],
  ])('has no price for %s/%s: %s', (provider, model) => {
    expect(table().priceOf(provider, model)).toBeUndefined();
  });

  describe('with llm.prices', () => {
    it('lets an override win over the shipped row, and flat: long-context rates go', () => {
      const t = table({ 'openai/gpt-5.4': { inputPerMTokUsd: 2, outputPerMTokUsd: 12 } });
      expect(t.priceOf('openai', 'gpt-5.4')).toEqual({
        inputMicrosPerMTok: 2_000_000,
        cachedInputMicrosPerMTok: 2_000_000,
        cacheWriteInputMicrosPerMTok: 2_000_000,
        cacheWrite1hInputMicrosPerMTok: 2_000_000,
        outputMicrosPerMTok: 12_000_000,
      });
    });

    it("prices a family's dated snapshots and aliases by the family's override", () => {
      const t = table({
        'openai/gpt-4o': { inputPerMTokUsd: 2, outputPerMTokUsd: 8 },
        'anthropic/claude-3-7-sonnet': { inputPerMTokUsd: 1, outputPerMTokUsd: 5 },
      });
      expect(inputRate(t, 'openai', 'gpt-4o-2024-11-20')).toBe(2_000_000);
      expect(inputRate(t, 'anthropic', 'claude-3-7-sonnet-latest')).toBe(1_000_000);
      expect(inputRate(t, 'anthropic', 'claude-3-7-sonnet-20250219')).toBe(1_000_000);
      // A snapshot with a row of its own keeps it: the exact id comes first.
      expect(inputRate(t, 'openai', 'gpt-4o-2024-05-13')).toBe(5_000_000);
    });

    it('lets an override of one snapshot or alias win for that id only', () => {
      const t = table({
        'openai/gpt-4o-2024-08-06': { inputPerMTokUsd: 1, outputPerMTokUsd: 4 },
        'anthropic/claude-3-7-sonnet-latest': { inputPerMTokUsd: 2, outputPerMTokUsd: 10 },
      });
      expect(inputRate(t, 'openai', 'gpt-4o-2024-08-06')).toBe(1_000_000);
      expect(inputRate(t, 'openai', 'gpt-4o-2024-11-20')).toBe(2_500_000);
      expect(inputRate(t, 'anthropic', 'claude-3-7-sonnet-latest')).toBe(2_000_000);
      expect(inputRate(t, 'anthropic', 'claude-3-7-sonnet')).toBe(3_000_000);
    });

    it('prices models the table lacks, fake ones included, with the same date rule', () => {
      const t = table({
        'fake/echo': { inputPerMTokUsd: 1, outputPerMTokUsd: 2, cachedInputPerMTokUsd: 0.5 },
        'openai/meta-llama/llama-3-70b': { inputPerMTokUsd: 0.5, outputPerMTokUsd: 0.75 },
      });
      expect(t.priceOf('fake', 'echo')).toEqual({
        inputMicrosPerMTok: 1_000_000,
        cachedInputMicrosPerMTok: 500_000,
        cacheWriteInputMicrosPerMTok: 1_000_000,
        cacheWrite1hInputMicrosPerMTok: 1_000_000,
        outputMicrosPerMTok: 2_000_000,
      });
      expect(t.priceOf('fake', 'echo-20260101')).toBe(t.priceOf('fake', 'echo'));
      expect(inputRate(t, 'openai', 'meta-llama/llama-3-70b')).toBe(500_000);
    });

    it.each(['gpt-4o', '/gpt-4o', 'openai/'])("refuses the key '%s', which is not provider/model", (key) => {
      expect(() => table({ [key]: { inputPerMTokUsd: 1, outputPerMTokUsd: 1 } })).toThrow(
        new RangeError(`llm.prices: '${key}' must be 'provider/model'`),
      );
    });

    it('refuses an impossible rate, naming the key', () => {
      expect(() => table({ 'openai/gpt-4o': { inputPerMTokUsd: 0.0000001, outputPerMTokUsd: 1 } })).toThrow(
        /llm\.prices\['openai\/gpt-4o'\] inputPerMTokUsd must be a whole number of micro-dollars/,
      );
    });
  });

  it('refuses a shipped table that lists an id twice', () => {
    const twice: ShippedPrices = {
      ...SHIPPED,
      prices: [
        ...SHIPPED.prices,
        { provider: 'openai', model: 'x', aliases: ['gpt-4o'], inputPerMTokUsd: 1, outputPerMTokUsd: 1 },
      ],
    };
    expect(() => new PriceTable({}, twice)).toThrow(new RangeError("shipped prices: 'openai/gpt-4o' is listed twice"));
  });
});
