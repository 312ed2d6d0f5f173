import { withoutDateSuffix } from './model-id';
import { type Price, priceFromUsd, type UsdRates } from './price';
import type { ShippedPrices } from './shipped-price';
import { SHIPPED_PRICES } from './shipped-prices';

/**
 * The prices every target is charged at: the shipped table with `llm.prices` over it, built
 * once at start-up. A model is found by its exact id, else by its family once a dated suffix is
 * removed (`withoutDateSuffix`); an unknown model has no price. At each step an override keyed
 * by that id wins over the shipped row; a shipped alias points at its row, so an override of
 * the row prices its aliases too.
 */
export class PriceTable {
  /** By `provider/model`: shipped rows, then overrides over them. */
  private readonly prices = new Map<string, Price>();
  /** Shipped alias → the `provider/model` of its row. */
  private readonly aliases = new Map<string, string>();

  /**
   * @param overrides `llm.prices`: USD per million tokens by `provider/model`.
   * @param shipped the table under them (tests give their own).
   * @throws RangeError for a key that is not `provider/model`, an impossible rate, or a shipped
   *   id listed twice.
   */
  constructor(overrides: Readonly<Record<string, UsdRates>> = {}, shipped: ShippedPrices = SHIPPED_PRICES) {
    for (const row of shipped.prices) {
      const key = `${row.provider}/${row.model}`;
      this.claim(key);
      this.prices.set(key, priceFromUsd(row, key));
      for (const alias of row.aliases ?? []) {
        const aliasKey = `${row.provider}/${alias}`;
        this.claim(aliasKey);
        this.aliases.set(aliasKey, key);
      }
    }
    for (const [key, rates] of Object.entries(overrides)) {
      const slash = key.indexOf('/');
      if (slash <= 0 || slash === key.length - 1) {
        throw new RangeError(`llm.prices: '${key}' must be 'provider/model'`);
      }
      // Flat: an override is what the operator pays, long-context rates included.
      this.prices.set(key, priceFromUsd(rates, `llm.prices['${key}']`));
    }
  }

  /** The price of `model` at `provider`, or undefined when neither the table nor an override has it. */
  priceOf(provider: string, model: string): Price | undefined {
    const exact = this.lookUp(`${provider}/${model}`);
    if (exact) return exact;
    const family = withoutDateSuffix(model);
    return family === undefined ? undefined : this.lookUp(`${provider}/${family}`);
  }

  private lookUp(key: string): Price | undefined {
    const own = this.prices.get(key);
    if (own) return own;
    const row = this.aliases.get(key);
    return row === undefined ? undefined : this.prices.get(row);
  }

  private claim(key: string): void {
    if (this.prices.has(key) || this.aliases.has(key)) throw new RangeError(`shipped prices: '${key}' is listed twice`);
  }
}
