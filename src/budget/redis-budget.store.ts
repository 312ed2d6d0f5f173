import type { RedisClient } from '../store';
// Deep imports: the store index pulls in the store module, which imports this module's index.
import {
  luaNow,
  type RedisKeys,
  RedisReplyError,
  RedisScript,
  type RedisTime,
  replyFlag,
  replyIntegerAt,
  replyIntegers,
} from '../store';
import type { BudgetStore, BudgetUsage, ReserveResult } from './budget.store';
import { assertMicros } from './money';
import { reservationTtlMs } from './reservation-ttl';

/**
 * How long budget keys outlive their last write: past the end of the longest period (a month
 * of 31 days), with room for a late settle and a read of the previous period. TTLs only clean
 * up; no decision depends on Redis expiring a key.
 */
export const BUDGET_KEY_RETENTION_MS = 35 * 24 * 60 * 60 * 1000;

/**
 * Lua shared by the scripts (and the call admission's, src/dispatch/admission). KEYS[1] is the
 * period's totals (hash: `spent`, `reserved`, integer micro-dollars), KEYS[2] the reservations (hash: id → amount), KEYS[3] their expiries (sorted
 * set: id scored by when it lapses, Redis time). Every decision is O(log n) in the reservations
 * held: `reserved` is kept as a running total, so nothing walks the reservations but `sweep`,
 * over the ones that lapsed (each lapses once). `keep` sets the TTL of the three keys: the
 * retention, or longer while a reservation holds.
 */
export const BUDGET_LUA = `
local function integer(value)
  return string.format('%.0f', value)
end

-- HINCRBY takes no "-0", and a delta of 0 writes nothing.
local function add(field, delta)
  if delta ~= 0 then redis.call('HINCRBY', KEYS[1], field, integer(delta)) end
end

local function sweep(now)
  local lapsed = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', integer(now))
  if #lapsed == 0 then return 0 end
  local freed = 0
  for i = 1, #lapsed, 1000 do
    local ids = { unpack(lapsed, i, math.min(i + 999, #lapsed)) }
    for _, amount in ipairs(redis.call('HMGET', KEYS[2], unpack(ids))) do
      freed = freed + (tonumber(amount) or 0)
    end
    redis.call('HDEL', KEYS[2], unpack(ids))
    redis.call('ZREM', KEYS[3], unpack(ids))
  end
  add('reserved', -freed)
  return #lapsed
end

local function totals()
  local values = redis.call('HMGET', KEYS[1], 'spent', 'reserved')
  return tonumber(values[1] or '0'), tonumber(values[2] or '0')
end

local function keep(now)
  local ttl = ${BUDGET_KEY_RETENTION_MS}
  local last = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
  if last[2] then ttl = math.max(ttl, tonumber(last[2]) - now) end
  for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], integer(ttl)) end
end

-- ARGV[2..5]: capMicros, reservationId, amountMicros, ttlMs. Reserves when the amount fits;
-- answers as RESERVE does.
local function reserve(now)
  local cap = tonumber(ARGV[2])
  local amount = tonumber(ARGV[4])
  local lapsed = sweep(now)
  local spent, reserved = totals()
  local replaced = tonumber(redis.call('HGET', KEYS[2], ARGV[3]) or '0')
  if spent + reserved - replaced + amount > cap then
    if lapsed > 0 then keep(now) end
    if spent + amount > cap then return {0, spent, reserved, 0} end
    local first = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
    return {0, spent, reserved, 1, math.max(1, tonumber(first[2]) - now)}
  end
  redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
  redis.call('ZADD', KEYS[3], integer(now + tonumber(ARGV[5])), ARGV[3])
  add('reserved', amount - replaced)
  keep(now)
  return {1, spent, reserved - replaced + amount}
end
`;

/**
 * ARGV: now, capMicros, reservationId, amountMicros, ttlMs → {1, spentMicros, reservedMicros},
 * or refused: {0, spentMicros, reservedMicros, 0} when spent + amount is over the cap, and
 * {0, spentMicros, reservedMicros, 1, ms until the earliest reservation lapses} when only the
 * reservations held are (the earliest is the first of the expiries, read in O(log n)).
 */
const RESERVE = `${BUDGET_LUA}
${luaNow(1)}
return reserve(now)
`;

/** ARGV: now, reservationId, actualMicros → 1 when the reservation held and was charged, else 0. */
const SETTLE = `${BUDGET_LUA}
${luaNow(1)}
local lapsed = sweep(now)
local held = redis.call('HGET', KEYS[2], ARGV[2])
if not held then
  if lapsed > 0 then keep(now) end
  return 0
end
redis.call('HDEL', KEYS[2], ARGV[2])
redis.call('ZREM', KEYS[3], ARGV[2])
add('reserved', -tonumber(held))
add('spent', tonumber(ARGV[3]))
keep(now)
return 1
`;

/**
 * ARGV: now, reservationId, ttlMs → 1 when the reservation held and now lapses no earlier than
 * now + ttlMs (the keys' TTL covering it), else 0: gone (settled, lapsed, never made), and
 * nothing written but what the sweep drops.
 */
const RENEW = `${BUDGET_LUA}
${luaNow(1)}
local lapsed = sweep(now)
local expiresAt = redis.call('ZSCORE', KEYS[3], ARGV[2])
if not expiresAt then
  if lapsed > 0 then keep(now) end
  return 0
end
local renewed = now + tonumber(ARGV[3])
if renewed > tonumber(expiresAt) then redis.call('ZADD', KEYS[3], integer(renewed), ARGV[2]) end
keep(now)
return 1
`;

/** ARGV: now → {spentMicros, reservedMicros}. */
const READ = `${BUDGET_LUA}
${luaNow(1)}
if sweep(now) > 0 then keep(now) end
local spent, reserved = totals()
return {spent, reserved}
`;

/**
 * Budgets shared by every replica: one Lua script per decision, on the three keys of a tenant's
 * period (`<prefix>{<tenant>}:budget:<period>:totals`, `...:reservations` and `...:expiries`,
 * tagged by the tenant), with time from Redis `TIME` (or the test clock through {@link RedisTime}). Amounts are
 * integer micro-dollars, exact in Lua's doubles up to 2^53.
 */
export class RedisBudgetStore implements BudgetStore {
  private readonly reserveScript: RedisScript;
  private readonly settleScript: RedisScript;
  private readonly renewScript: RedisScript;
  private readonly readScript: RedisScript;

  constructor(
    redis: RedisClient,
    private readonly keys: RedisKeys,
    private readonly time: RedisTime,
  ) {
    this.reserveScript = new RedisScript(redis, RESERVE);
    this.settleScript = new RedisScript(redis, SETTLE);
    this.renewScript = new RedisScript(redis, RENEW);
    this.readScript = new RedisScript(redis, READ);
  }

  async reserve(
    tenant: string,
    period: string,
    capMicros: number,
    reservationId: string,
    amountMicros: number,
    ttlMs: number,
  ): Promise<ReserveResult> {
    return reserveResult(
      await this.reserveScript.run(
        this.keysOf(tenant, period),
        this.reserveArgs(capMicros, reservationId, amountMicros, ttlMs),
      ),
    );
  }

  /** ARGV of a reserve: the time, then what `reserve` reads from ARGV[2..5] (amounts checked). */
  reserveArgs(capMicros: number, reservationId: string, amountMicros: number, ttlMs: number): string[] {
    assertMicros(capMicros, 'capMicros');
    assertMicros(amountMicros, 'amountMicros');
    const wholeTtlMs = reservationTtlMs(reservationId, ttlMs);
    return [this.time.arg(), String(capMicros), reservationId, String(amountMicros), String(wholeTtlMs)];
  }

  async settle(tenant: string, period: string, reservationId: string, actualMicros: number): Promise<boolean> {
    assertMicros(actualMicros, 'actualMicros');
    const settled = await this.settleScript.run(this.keysOf(tenant, period), [
      this.time.arg(),
      reservationId,
      actualMicros,
    ]);
    return replyFlag(settled, 'budget settle');
  }

  async renew(tenant: string, period: string, reservationId: string, ttlMs: number): Promise<boolean> {
    const wholeTtlMs = reservationTtlMs(reservationId, ttlMs);
    const renewed = await this.renewScript.run(this.keysOf(tenant, period), [
      this.time.arg(),
      reservationId,
      wholeTtlMs,
    ]);
    // Anything but 0 or 1 rejects: "gone" would stop a call whose hold may well be there.
    return replyFlag(renewed, 'budget renew');
  }

  async read(tenant: string, period: string): Promise<BudgetUsage> {
    const reply = await this.readScript.run(this.keysOf(tenant, period), [this.time.arg()]);
    const [spentMicros, reservedMicros] = replyIntegers(reply, 2, 'budget read');
    return { spentMicros, reservedMicros };
  }

  /**
   * The keys of one tenant's period: its totals, its reservations, their expiries. Tagged by
   * the tenant alone, like its rate-limit buckets, so that one script may decide both (the call
   * admission) on one Cluster slot.
   */
  keysOf(tenant: string, period: string): [string, string, string] {
    return [
      this.keys.key(tenant, `budget:${period}:totals`),
      this.keys.key(tenant, `budget:${period}:reservations`),
      this.keys.key(tenant, `budget:${period}:expiries`),
    ];
  }
}

/**
 * What `reserve` answered: {1, spent, reserved}, or refused {0, spent, reserved, 0} (the cap) and
 * {0, spent, reserved, 1, ms until the earliest reservation lapses} (reservations held). `from`
 * is where it starts in the script's reply.
 */
export function reserveResult(reply: unknown, from = 0): ReserveResult {
  const script = 'budget reserve';
  const [ok, spentMicros, reservedMicros] = replyIntegers(Array.isArray(reply) ? reply.slice(from) : reply, 3, script);
  if (ok === 1) return { ok: true, spentMicros, reservedMicros };
  if (ok !== 0) throw new RedisReplyError(script, 'a decision of 0 or 1');
  const cause = replyIntegerAt(reply, from + 3, script);
  if (cause === 0) return { ok: false, cause: 'cap', spentMicros, reservedMicros };
  if (cause !== 1) throw new RedisReplyError(script, 'a refusal of cause 0 or 1');
  const nextLapseInMs = replyIntegerAt(reply, from + 4, script, 1);
  return { ok: false, cause: 'held', nextLapseInMs, spentMicros, reservedMicros };
}
