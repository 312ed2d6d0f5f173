import type { Clock } from '../common';
import type { BucketRule, RateLimitDecision, RateLimitStore } from './rate-limit.store';
import { adjustTokens, assertAdjust, assertTake, fullAt, takeTokens, type TokenBucketState } from './token-bucket';

interface StoredBucket extends TokenBucketState {
  /** When this bucket is full again (at the rate it was written with). */
  fullAt: number;
}

interface Entry {
  readonly key: string;
  readonly buckets: Map<string, StoredBucket>;
  /** When every bucket of the key is full again: from then on the entry says nothing. */
  fullAt: number;
}

/**
 * Entries looked at per decision: more than the one a decision can add, so the sweep goes
 * round the whole map faster than it grows.
 */
const SWEEP_STEPS = 3;

/**
 * The embedded rate-limit store: each decision is one synchronous block on a Map, answered at
 * once, on the injected clock's monotonic time. A key is held only while one of its buckets is below full
 * (a missing key is a full one). A sweep goes round the map, {@link SWEEP_STEPS} entries per
 * decision, and drops the full ones, so memory stays bounded by the keys recently limited, with
 * no timer and O(1) work per decision. Entries are updated in place: a busy key costs no
 * re-insertion (a Map that keeps deleting and re-adding keys keeps rebuilding its table).
 */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly entries = new Map<string, Entry>();
  /** Where the sweep is: a Map iterator stays valid while entries come and go. */
  private cursor: MapIterator<Entry> | undefined;

  constructor(private readonly clock: Clock) {}

  take(key: string, rules: readonly BucketRule[], amounts: readonly number[]): RateLimitDecision {
    assertTake(rules, amounts);
    const now = this.clock.now();
    const entry = this.entries.get(key);
    const outcome = takeTokens(bucketsOf(entry, rules), rules, amounts, now);
    if (outcome.next) this.write(key, entry, rules, outcome.next, now);
    this.sweep(now);
    return outcome.decision;
  }

  adjust(key: string, rules: readonly BucketRule[], amounts: readonly number[]): void {
    assertAdjust(rules, amounts);
    const now = this.clock.now();
    const entry = this.entries.get(key);
    this.write(key, entry, rules, adjustTokens(bucketsOf(entry, rules), rules, amounts, now), now);
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
    for (let index = 0; index < rules.length; index++) {
      const { name, perMinute } = rules[index];
      const { units, updatedAt } = next[index];
      const full = fullAt(next[index], perMinute);
      const bucket = buckets.get(name);
      if (bucket) {
        bucket.units = units;
        bucket.updatedAt = updatedAt;
        bucket.fullAt = full;
      } else {
        buckets.set(name, { units, updatedAt, fullAt: full });
      }
    }
    let latest = Number.NEGATIVE_INFINITY;
    for (const bucket of buckets.values()) latest = Math.max(latest, bucket.fullAt);
    if (latest <= now) this.entries.delete(key);
    else if (entry) entry.fullAt = latest;
    else this.entries.set(key, { key, buckets, fullAt: latest });
  }

  private sweep(now: number): void {
    const steps = Math.min(SWEEP_STEPS, this.entries.size);
    for (let step = 0; step < steps; step++) {
      let next = this.cursor?.next();
      if (!next || next.done) {
        this.cursor = this.entries.values();
        next = this.cursor.next();
      }
      const entry = next.value as Entry;
      if (entry.fullAt <= now) this.entries.delete(entry.key);
    }
  }
}

/** The stored state of each rule's bucket of an entry, in rule order (undefined: full). */
function bucketsOf(entry: Entry | undefined, rules: readonly BucketRule[]): Array<StoredBucket | undefined> {
  const states = new Array<StoredBucket | undefined>(rules.length);
  for (let index = 0; index < rules.length; index++) states[index] = entry?.buckets.get(rules[index].name);
  return states;
}
