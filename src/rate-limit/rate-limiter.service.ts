import { Inject, Injectable, Logger } from '@nestjs/common';
import { type Awaitable, isPromiseLike, ResilienceError } from '../common';
import { RATE_LIMIT_MODULE_OPTIONS, type RateLimitModuleOptions } from './rate-limit.module-definition';
import { type BucketRule, type RateLimitDecision, RateLimitStore } from './rate-limit.store';

/** Where a response's headers go: the HTTP reply of the call. */
export interface HeaderSink {
  header(name: string, value: string): unknown;
}

/** What the rate limiter has counted, for metrics. */
export interface RateLimitCounts {
  /** Calls refused (or, in shadow mode, that would have been), by tenant. */
  limited: Map<string, number>;
  /** Calls let through because the store was down and `failMode` is open. */
  failedOpen: number;
}

const WINDOW_SECONDS = 60;
const AMOUNTS_CACHE_SIZE = 64;

/** A tenant's buckets, worked out once: the rules, their RateLimit-Policy, amounts per call by tokens. */
export interface TenantLimits {
  rules: readonly BucketRule[];
  policy: string;
  amountsByTokens: Map<number, readonly number[]>;
  /** Its tokens-per-minute rule alone, for the takes and settlements of later attempts. */
  tpmOnly?: TenantLimits;
}

/**
 * Step 4 of the pipeline: per-tenant token buckets for requests and tokens per minute
 * (`rateLimits.default`, overridden per tenant). A refused call takes nothing from any bucket
 * and is answered 429 `rate_limited` with Retry-After and the IETF draft `RateLimit-Policy` /
 * `RateLimit` headers, which every limited call carries. With the store down, `failMode`
 * decides: open lets the call through (and counts it), closed answers 503 `unavailable`.
 * `enforce: false` limits nothing and only counts what would have been limited.
 */
@Injectable()
export class RateLimiter {
  private readonly logger = new Logger('Bulkhead');
  private readonly rulesByTenant = new Map<string, TenantLimits>();
  readonly counts: RateLimitCounts = { limited: new Map(), failedOpen: 0 };

  constructor(
    @Inject(RateLimitStore) private readonly store: RateLimitStore,
    @Inject(RATE_LIMIT_MODULE_OPTIONS) private readonly config: RateLimitModuleOptions,
  ) {}

  /**
   * Takes one request and `tokens` from the tenant's buckets, or refuses the call (throws, or
   * rejects when the store answers later). Sets the RateLimit headers on `headers` either way.
   * Answers whether it took anything (not for a tenant without limits, nor when the store failed
   * open or shadow mode let a refused call through); at once, without a promise, when decided at
   * once (the memory store) or when there is nothing to decide.
   */
  admit(tenant: string, tokens: number, headers?: HeaderSink): Awaitable<boolean> {
    const limits = this.limitsOf(tenant);
    if (!limits) return false;
    const amounts = amountsOf(limits, tokens);
    let decided: Awaitable<RateLimitDecision>;
    try {
      decided = this.store.take(tenant, limits.rules, amounts);
    } catch (error) {
      return this.storeFailed(error);
    }
    if (isPromiseLike(decided)) {
      return Promise.resolve(decided).then(
        (decision) => this.apply(tenant, limits, tokens, decision, headers),
        (error: unknown) => this.storeFailed(error),
      );
    }
    return this.apply(tenant, limits, tokens, decided, headers);
  }

  /**
   * Gives back what {@link admit} took for a call of `tokens` that the next step refused (the
   * budget's): the call takes nothing. Never throws or rejects.
   */
  giveBack(tenant: string, tokens: number): Promise<void> | undefined {
    const limits = this.limitsOf(tenant);
    if (!limits) return undefined;
    let adjusted: Awaitable<void>;
    try {
      adjusted = this.store.adjust(tenant, limits.rules, amountsOf(limits, tokens));
    } catch {
      return undefined;
    }
    return isPromiseLike(adjusted) ? Promise.resolve(adjusted).catch(() => undefined) : undefined;
  }

  /**
   * A tenant's buckets and what a call of `tokens` takes from them, for a store that decides
   * them together with something else (the call admission's script); undefined when the tenant
   * has no limits. Hand the decision to {@link apply}, a store failure to {@link storeFailed}.
   */
  plan(tenant: string, tokens: number): { limits: TenantLimits; amounts: readonly number[] } | undefined {
    const limits = this.limitsOf(tenant);
    return limits && { limits, amounts: amountsOf(limits, tokens) };
  }

  /** Whether refusals are enforced (false in shadow mode, which only counts them). */
  get enforcing(): boolean {
    return this.config.rateLimits.enforce;
  }

  /**
   * Takes `tokens` more from the tenant's tokens-per-minute bucket for a call already admitted
   * (another attempt of an LLM request), or refuses it like {@link admit}, taking nothing.
   * Answers whether it took them, as {@link admit} does: false for a tenant without a
   * tokens-per-minute limit, in shadow mode when the bucket would have refused, and when the
   * store failed open; at once when decided at once.
   */
  takeTokens(tenant: string, tokens: number): Awaitable<boolean> {
    const tpm = this.tpmOf(tenant);
    if (!tpm || !(tokens > 0)) return false;
    let decided: Awaitable<RateLimitDecision>;
    try {
      decided = this.store.take(tenant, tpm.rules, [tokens]);
    } catch (error) {
      return this.storeFailed(error);
    }
    if (isPromiseLike(decided)) {
      return Promise.resolve(decided).then(
        (decision) => this.apply(tenant, tpm, tokens, decision, undefined),
        (error: unknown) => this.storeFailed(error),
      );
    }
    return this.apply(tenant, tpm, tokens, decided, undefined);
  }

  /**
   * Settles tokens taken ahead against what was used: gives back `takenTokens - usedTokens` to
   * the tokens-per-minute bucket, or takes the difference when more was used (the bucket may
   * then run below empty, and later calls wait for it). Never throws or rejects: the call is over.
   */
  settleTokens(tenant: string, takenTokens: number, usedTokens: number): Promise<void> | undefined {
    const tpm = this.tpmOf(tenant);
    const back = takenTokens - usedTokens;
    if (!tpm || back === 0 || !Number.isFinite(back)) return undefined;
    let adjusted: Awaitable<void>;
    try {
      adjusted = this.store.adjust(tenant, tpm.rules, [back]);
    } catch {
      return undefined;
    }
    return isPromiseLike(adjusted) ? Promise.resolve(adjusted).catch(() => undefined) : undefined;
  }

  /** Whether a tenant's calls are held to a tokens-per-minute limit. */
  limitsTokens(tenant: string): boolean {
    return this.tpmOf(tenant) !== undefined;
  }

  /** The tenant's tokens-per-minute bucket alone, as limits of their own (worked out once). */
  private tpmOf(tenant: string): TenantLimits | undefined {
    const limits = this.limitsOf(tenant);
    const rule = limits?.rules.find((candidate) => candidate.name === 'tpm');
    if (!limits || !rule) return undefined;
    limits.tpmOnly ??= { rules: Object.freeze([rule]), policy: limits.policy, amountsByTokens: new Map() };
    return limits.tpmOnly;
  }

  /**
   * Sets the headers of a decision; throws the refusal of a call the limit refused. Answers
   * whether the decision took from the buckets (a refusal in shadow mode took nothing).
   */
  apply(
    tenant: string,
    limits: TenantLimits,
    tokens: number,
    decision: RateLimitDecision,
    headers: HeaderSink | undefined,
  ): boolean {
    headers?.header('ratelimit-policy', limits.policy);
    headers?.header('ratelimit', rateLimitHeader(decision));
    if (decision.allowed) return true;
    this.counts.limited.set(tenant, (this.counts.limited.get(tenant) ?? 0) + 1);
    if (!this.config.rateLimits.enforce) return false;
    const tpm = limits.rules.find((rule) => rule.name === 'tpm');
    if (tpm && tokens > tpm.perMinute) {
      // Waiting would never help: say so instead of sending the caller back in vain.
      throw new ResilienceError(
        'schema',
        `this call needs ${tokens} tokens, more than the ${tpm.perMinute} per minute allowed`,
      );
    }
    throw new ResilienceError('rate_limited', 'this tenant is over its rate limit', {
      retryAfterMs: Math.max(1, decision.retryAfterMs),
    });
  }

  /**
   * A store that failed: failMode decides (throws when closed; answers that nothing was taken
   * when open). A RangeError is a bad amount, our bug: never "the store is down".
   */
  storeFailed(error: unknown): false {
    if (error instanceof RangeError) throw error;
    if (this.config.rateLimits.failMode === 'closed') {
      throw new ResilienceError('unavailable', 'the rate limit store is unavailable', { cause: error });
    }
    this.counts.failedOpen++;
    if (this.counts.failedOpen === 1 || this.counts.failedOpen % 1000 === 0) {
      this.logger.warn(
        `rate limit store unavailable; letting calls through (failMode open): ${(error as Error)?.name}`,
      );
    }
    return false;
  }

  private limitsOf(tenant: string): TenantLimits | undefined {
    let limits = this.rulesByTenant.get(tenant);
    if (!limits) {
      const { default: base, tenants } = this.config.rateLimits;
      const own = Object.hasOwn(tenants, tenant) ? tenants[tenant] : undefined;
      const rpm = own?.rpm ?? base?.rpm;
      const tpm = own?.tpm ?? base?.tpm;
      const rules: BucketRule[] = [];
      if (rpm !== undefined) rules.push({ name: 'rpm', perMinute: rpm });
      if (tpm !== undefined) rules.push({ name: 'tpm', perMinute: tpm });
      const policy = rules.map((rule) => `"${rule.name}";q=${rule.perMinute};w=${WINDOW_SECONDS}`).join(', ');
      limits = { rules: Object.freeze(rules), policy, amountsByTokens: new Map() };
      // Tenants are configured names or `anonymous`: the map stays as small as the config.
      this.rulesByTenant.set(tenant, limits);
    }
    return limits.rules.length > 0 ? limits : undefined;
  }
}

/** One request and `tokens` per rule, in rule order; the same frozen array for the same tokens. */
function amountsOf(limits: TenantLimits, tokens: number): readonly number[] {
  let amounts = limits.amountsByTokens.get(tokens);
  if (!amounts) {
    amounts = Object.freeze(limits.rules.map((rule) => (rule.name === 'rpm' ? 1 : tokens)));
    // Tokens per call come from the tools' config: a few distinct values.
    if (limits.amountsByTokens.size < AMOUNTS_CACHE_SIZE) limits.amountsByTokens.set(tokens, amounts);
  }
  return amounts;
}

/** `RateLimit: "rpm";r=<remaining>;t=<seconds until full>, ...` (draft-ietf-httpapi-ratelimit-headers). */
function rateLimitHeader(decision: RateLimitDecision): string {
  let header = '';
  for (const bucket of decision.buckets) {
    if (header !== '') header += ', ';
    header += `"${bucket.name}";r=${bucket.remaining};t=${Math.ceil(bucket.resetMs / 1000)}`;
  }
  return header;
}
