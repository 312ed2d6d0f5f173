import { ANTHROPIC_PRICES } from './anthropic-prices';
import { OPENAI_PRICES } from './openai-prices';
import type { ShippedPrices } from './shipped-price';

/**
 * The prices Bulkhead ships, read once and kept in the repository: never fetched at run time
 * (egress rules, and the same request costs the same on every replica). `llm.prices` overrides
 * any row by `provider/model` and prices what is missing; `fake` models are priced only there.
 *
 * A dated snapshot priced apart from its family needs a row of its own (`gpt-4o-2024-05-13`),
 * or the date rule gives it the family's price. To update: change the rows and `takenOn`
 * together; shipped-prices.spec.ts checks every row against the data named in `source`.
 */
export const SHIPPED_PRICES: ShippedPrices = {
  takenOn: '2026-12-01',
  source:
    '@pydantic/genai-prices 0.1.8 (data of 2026-09-23), from https://developers.openai.com/api/docs/pricing ' +
    'and https://platform.claude.com/docs/en/about-claude/pricing',
  prices: [
    ...OPENAI_PRICES.map((row) => ({ provider: 'openai', ...row })),
    ...ANTHROPIC_PRICES.map((row) => ({ provider: 'anthropic', ...row })),
  ],
};
