import type { Clock } from '../common';
import type { BucketRule, RateLimitDecision, RateLimitStore } from './rate-limit.store';
import { adjustTokens, assertAdjust, assertTake, fullAt, takeTokens, type TokenBucketState } from './token-bucket';

interface StoredBucket extends TokenBucketState {
  /** When this bucket is full again (at the rate it was written with). */
  fullAt: number;
}

interface Entry {
  readonly buckets: Map<string, StoredBucket>;
  /** When every bucket of the key is full again: from then on the entry says nothing. */
  fullAt: number;
}

/**
 * Entries looked at per decision: more than the one a decision can add, so the sweep goes
 * round the whole map faster than it grows.
 */
const SWEEP_STEPS = 2;

/**
 * The embedded rate-limit store: each decision is one synchronous block on a Map, on the
 * injected clock's monotonic time. A key is held only while one of its buckets is below full
 * (a missing key is a full one); each decision looks at the {@link SWEEP_STEPS} oldest entries
 * and drops the full ones (or moves the others to the back), so memory stays bounded by the
 * keys recently limited, with no timer and O(1) amortised work.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly clock: Clock) {}

  async take(key: string, rules: readonly BucketRule[], amounts: readonly number[]): Promise<RateLimitDecision> {
    assertTake(rules, amounts);
    const now = this.clock.now();
    const entry = this.entries.get(key);
    const outcome = takeTokens(
      rules.map((rule) => entry?.buckets.get(rule.name)),
      rules,
      amounts,
      now,
    );
    if (outcome.next) this.write(key, entry, rules, outcome.next, now);
    this.sweep(now);
    return outcome.decision;
  }

  async adjust(key: string, rules: readonly BucketRule[], amounts: readonly number[]): Promise<void> {
    assertAdjust(rules, amounts);
    const now = this.clock.now();
    const entry = this.entries.get(key);
    const next = adjustTokens(
      rules.map((rule) => entry?.buckets.get(rule.name)),
      rules,
      amounts,
      now,
    );
    this.write(key, entry, rules, next, now);
    this.sweep(now);
  }

  /** Keys held now (each with at least one bucket below full, or not yet swept). */
  get size(): number {
    return this.entries.size;
  }

  private write(
    key: string,
    entry: Entry | undefined,
    rules: readonly BucketRule[],
    next: readonly TokenBucketState[],
    now: number,
  ): void {
    const buckets = entry?.buckets ?? new Map<string, StoredBucket>();
    rules.forEach((rule, index) => {
      buckets.set(rule.name, { ...next[index], fullAt: fullAt(next[index], rule.perMinute) });
    });
    let latest = Number.NEGATIVE_INFINITY;
    for (const bucket of buckets.values()) latest = Math.max(latest, bucket.fullAt);
    // Re-inserting moves the key to the back, behind the entries the sweep looks at first.
    this.entries.delete(key);
    if (latest > now) this.entries.set(key, { buckets, fullAt: latest });
  }

  private sweep(now: number): void {
    const steps = Math.min(SWEEP_STEPS, this.entries.size);
    for (let step = 0; step < steps; step++) {
      const [key, entry] = this.entries.entries().next().value!;
      this.entries.delete(key);
      if (entry.fullAt > now) this.entries.set(key, entry);
    }
  }
}
