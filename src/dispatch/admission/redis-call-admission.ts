import type { RedisClient } from '../../store';
// Deep imports: these modules' indexes pull in their Nest modules, which import the store module.
import {
  BUDGET_LUA,
  type RedisBudgetStore,
  type ReservationRequest,
  reserveResult,
  type ReserveResult,
} from '../../budget';
import {
  assertTake,
  type BucketRule,
  pushBucketArgs,
  type RateLimitDecision,
  rateLimitLua,
  type RedisRateLimitStore,
  takeDecision,
  takeReplyLength,
} from '../../rate-limit';
import { luaNow, RedisScript } from '../../store';

/**
 * KEYS: the budget period's three keys, then the tenant's rate-limit hash (one hash tag, the
 * tenant). ARGV: the time, the reservation (cap, id, amount, ttl), then the buckets. Decides
 * the take without writing; when it fits, reserves; takes only once the reservation is held.
 * Answers the take's integers, followed, when the take fits, by the reservation's.
 */
const ADMIT = `${luaNow(1)}
${BUDGET_LUA}
${rateLimitLua('KEYS[4]', 6)}
local levels, ats, retry = decideTake()
if retry > 0 then return takeReply(0, retry, levels) end
local held = reserve(now)
if held[1] == 1 then commitTake(levels, ats) end
local reply = takeReply(1, 0, levels)
for i = 1, #held do reply[#reply + 1] = held[i] end
return reply
`;

/** What the admission script decided: the rate limit's decision, and the budget's when the take fit. */
export interface JointDecision {
  rate: RateLimitDecision;
  /** Undefined when the rate limit refused: nothing was reserved. */
  budget: ReserveResult | undefined;
}

/**
 * Steps 4 and 5 of a call on the Redis stores in one script, one round trip: the rate-limit
 * take and the first attempt's budget reservation, all or nothing. A call the rate limit
 * refuses reserves nothing (as when the steps run apart); a call the budget refuses takes
 * nothing from the buckets either. The keys and the arithmetic are the two stores' own.
 */
export class RedisCallAdmission {
  private readonly script: RedisScript;

  constructor(
    redis: RedisClient,
    private readonly rates: RedisRateLimitStore,
    private readonly budgets: RedisBudgetStore,
  ) {
    this.script = new RedisScript(redis, ADMIT);
  }

  async admit(
    rules: readonly BucketRule[],
    amounts: readonly number[],
    request: ReservationRequest,
  ): Promise<JointDecision> {
    assertTake(rules, amounts);
    const { reservation } = request;
    const args = this.budgets.reserveArgs(request.capMicros, reservation.id, reservation.amountMicros, request.ttlMs);
    pushBucketArgs(args, rules, amounts);
    const [totals, reservations, expiries] = this.budgets.keysOf(reservation.tenant, reservation.period);
    const reply = await this.script.run([totals, reservations, expiries, this.rates.hashKey(reservation.tenant)], args);
    const rate = takeDecision(reply, rules);
    return { rate, budget: rate.allowed ? reserveResult(reply, takeReplyLength(rules)) : undefined };
  }
}
