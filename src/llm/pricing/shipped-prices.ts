import { ANTHROPIC_PRICES } from './anthropic-prices';
import { OPENAI_PRICES } from './openai-prices';
import type { UsdPrice } from './price';

/** One row of the shipped table: a model of a provider, in USD per million tokens. */
export interface ShippedPrice extends UsdPrice {
  provider: string;
  /** The family id; its dated snapshots (`-YYYY-MM-DD`, `-YYYYMMDD`) take this price too. */
  model: string;
  /** Other ids the provider serves this model under at this price (`-latest`, `-0` aliases). */
  aliases?: readonly string[];
}

/** A versioned price table: its rows, when the prices were taken and where from. */
export interface ShippedPrices {
  /** The day the prices were read: they are the ones in force then. ISO date. */
  readonly takenOn: string;
  readonly source: string;
  readonly prices: readonly ShippedPrice[];
}

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
