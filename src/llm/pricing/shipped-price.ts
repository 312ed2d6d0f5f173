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
