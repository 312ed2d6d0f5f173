import type { BucketRule, BucketState, RateLimitDecision } from './rate-limit.store';

/**
 * Buckets count in units of 1/60 000 token, so a bucket of `perMinute` refills by exactly
 * `perMinute` units per millisecond: with whole per-minute rates, whole amounts and whole
 * milliseconds every level is an integer and no rounding ever drifts (a retry after exactly
 * `retryAfterMs` is admitted, one millisecond earlier is not). Fractional tokens are kept.
 */
export const UNITS_PER_TOKEN = 60_000;

/** Bucket names are short identifiers, so Redis field names built from them cannot collide. */
const BUCKET_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** What a store keeps of one bucket. A bucket with no state is full. */
export interface TokenBucketState {
  /** Tokens held at `updatedAt`, in {@link UNITS_PER_TOKEN} units; below 0 after an overage. */
  units: number;
  /** When `units` was computed, in the store's milliseconds. */
  updatedAt: number;
}

/** A take's outcome: the decision, and the states to write (none when refused). */
export interface TakeOutcome {
  decision: RateLimitDecision;
  /** The new state of each rule's bucket, in rule order; undefined when refused (nothing changes). */
  next: TokenBucketState[] | undefined;
}

/** A bucket's capacity in units. */
export function capacityUnits(perMinute: number): number {
  return perMinute * UNITS_PER_TOKEN;
}

/**
 * The bucket's level at `now`: the stored level plus the refill since `updatedAt`, capped at
 * capacity. Time before `updatedAt` (a clock that stepped back) refills nothing.
 */
export function unitsAt(state: TokenBucketState | undefined, perMinute: number, now: number): number {
  const capacity = capacityUnits(perMinute);
  if (!state) return capacity;
  const elapsed = Math.max(0, now - state.updatedAt);
  return Math.min(capacity, state.units + elapsed * perMinute);
}

/**
 * Milliseconds until a bucket at `units` holds `amount` tokens (0 when it does now). An amount
 * of 0 or less always fits, even in overage: it asks nothing. An amount above capacity never
 * fits; it answers 60 s × amount / perMinute, the time the bucket would need to earn the amount
 * from empty — never 0, and never shorter than the time until the bucket is full.
 */
export function msToHold(units: number, amount: number, perMinute: number): number {
  if (amount <= 0) return 0;
  const needed = amount * UNITS_PER_TOKEN;
  if (amount > perMinute) return Math.ceil(needed / perMinute);
  return units >= needed ? 0 : Math.ceil((needed - units) / perMinute);
}

/** Milliseconds (fractional) until a bucket at `units` is full again. */
export function msUntilFull(units: number, perMinute: number): number {
  return Math.max(0, capacityUnits(perMinute) - units) / perMinute;
}

/** When the bucket of `state` is full again, in the store's milliseconds (a drop-by time). */
export function fullAt(state: TokenBucketState, perMinute: number): number {
  return state.updatedAt + msUntilFull(state.units, perMinute);
}

/** What a bucket at `units` reports: whole tokens left (never below 0) and ms until full (ceil). */
export function bucketState(name: string, units: number, perMinute: number): BucketState {
  return {
    name,
    remaining: Math.floor(Math.max(0, units) / UNITS_PER_TOKEN),
    resetMs: Math.ceil(msUntilFull(units, perMinute)),
  };
}

/**
 * Takes `amounts[i]` from the bucket `states[i]` of `rules[i]`, all or none. Refused when any
 * amount does not fit; then `retryAfterMs` is the longest {@link msToHold} of the asked buckets
 * and nothing changes.
 */
export function takeTokens(
  states: ReadonlyArray<TokenBucketState | undefined>,
  rules: readonly BucketRule[],
  amounts: readonly number[],
  now: number,
): TakeOutcome {
  // Plain loops into arrays of their final length, no closures: this runs on every limited call.
  const count = rules.length;
  const levels = new Array<number>(count);
  let retryAfterMs = 0;
  for (let index = 0; index < count; index++) {
    const { perMinute } = rules[index];
    levels[index] = unitsAt(states[index], perMinute, now);
    retryAfterMs = Math.max(retryAfterMs, msToHold(levels[index], amounts[index], perMinute));
  }
  const buckets = new Array<BucketState>(count);
  if (retryAfterMs > 0) {
    for (let index = 0; index < count; index++) {
      buckets[index] = bucketState(rules[index].name, levels[index], rules[index].perMinute);
    }
    return { decision: { allowed: false, retryAfterMs, buckets }, next: undefined };
  }
  const next = new Array<TokenBucketState>(count);
  for (let index = 0; index < count; index++) {
    const units = levels[index] - Math.max(0, amounts[index]) * UNITS_PER_TOKEN;
    next[index] = { units, updatedAt: laterOf(states[index], now) };
    buckets[index] = bucketState(rules[index].name, units, rules[index].perMinute);
  }
  return { decision: { allowed: true, retryAfterMs: 0, buckets }, next };
}

/**
 * Adds `amounts[i]` to bucket `rules[i]` (a negative amount takes, possibly below zero), each
 * capped at capacity. Returns the new state of each rule's bucket, in rule order.
 */
export function adjustTokens(
  states: ReadonlyArray<TokenBucketState | undefined>,
  rules: readonly BucketRule[],
  amounts: readonly number[],
  now: number,
): TokenBucketState[] {
  return rules.map((rule, index) => ({
    units: Math.min(
      capacityUnits(rule.perMinute),
      unitsAt(states[index], rule.perMinute, now) + amounts[index] * UNITS_PER_TOKEN,
    ),
    updatedAt: laterOf(states[index], now),
  }));
}

/**
 * Checks the arguments of a take: one amount per rule, each finite and at least 0.
 * @throws RangeError otherwise, or when the rules are invalid (see {@link assertRules}).
 */
export function assertTake(rules: readonly BucketRule[], amounts: readonly number[]): void {
  assertRules(rules, amounts);
  for (const amount of amounts) if (amount < 0) throw new RangeError('a take amount must be at least 0');
}

/**
 * Checks the arguments of an adjust: one finite amount per rule (of either sign).
 * @throws RangeError otherwise, or when the rules are invalid (see {@link assertRules}).
 */
export function assertAdjust(rules: readonly BucketRule[], amounts: readonly number[]): void {
  assertRules(rules, amounts);
}

/**
 * Rules of one call: names `[A-Za-z0-9_-]{1,64}`, each at most once (two rules on one bucket
 * would break all-or-none), `perMinute` finite and above 0, and one finite amount per rule.
 * @throws RangeError
 */
export function assertRules(rules: readonly BucketRule[], amounts: readonly number[]): void {
  if (rules.length !== amounts.length) {
    throw new RangeError(`${rules.length} bucket rules but ${amounts.length} amounts`);
  }
  // Checked on every decision, so without allocating: a call names one or two buckets.
  for (let index = 0; index < rules.length; index++) {
    const rule = rules[index];
    if (!BUCKET_NAME.test(rule.name)) throw new RangeError(`invalid bucket name '${rule.name}'`);
    for (let earlier = 0; earlier < index; earlier++) {
      if (rules[earlier].name === rule.name) throw new RangeError(`bucket '${rule.name}' appears twice`);
    }
    if (!(Number.isFinite(rule.perMinute) && rule.perMinute > 0)) {
      throw new RangeError(`bucket '${rule.name}': perMinute must be finite and above 0`);
    }
    if (!Number.isFinite(amounts[index])) throw new RangeError('every amount must be a finite number');
  }
}

/** A write never moves a bucket's time back, so a clock that stepped back cannot mint tokens later. */
function laterOf(state: TokenBucketState | undefined, now: number): number {
  return state ? Math.max(state.updatedAt, now) : now;
}
