import type Redis from 'ioredis';
// Deep imports: the store index pulls in the store module, which imports this module's index.
import { luaNow, type RedisKeys, type RedisTime } from '../store/redis-keys';
import { RedisScript } from '../store/redis-script';
import type { BudgetStore, BudgetUsage, ReserveResult } from './budget.store';
import { assertMicros } from './money';

/**
 * How long budget keys outlive their last write: past the end of the longest period (a month
 * of 31 days), with room for a late settle and a read of the previous period. TTLs only clean
 * up; no decision depends on Redis expiring a key.
 */
export const BUDGET_KEY_RETENTION_MS = 35 * 24 * 60 * 60 * 1000;

/**
 * Lua shared by the scripts. KEYS[1] is the spent counter (an integer), KEYS[2] the hash of
 * reservations, id → "amountMicros:expiresAtMs" (Redis time). `sweep` drops lapsed (and
 * unreadable) reservations and answers the sum still held, the latest expiry and how many it
 * dropped; `keep` sets the TTL of every key: the retention, or longer while a reservation holds.
 */
const SWEEP = `
local function sweep(now)
  local fields = redis.call('HGETALL', KEYS[2])
  local reserved, lastExpiry, lapsed = 0, now, {}
  for i = 1, #fields, 2 do
    local value = fields[i + 1]
    local colon = string.find(value, ':', 1, true)
    local amount = colon and tonumber(string.sub(value, 1, colon - 1))
    local expiresAt = colon and tonumber(string.sub(value, colon + 1))
    if amount and expiresAt and expiresAt > now then
      reserved = reserved + amount
      if expiresAt > lastExpiry then lastExpiry = expiresAt end
    else
      lapsed[#lapsed + 1] = fields[i]
    end
  end
  for i = 1, #lapsed, 1000 do
    redis.call('HDEL', KEYS[2], unpack(lapsed, i, math.min(i + 999, #lapsed)))
  end
  return reserved, lastExpiry, #lapsed
end

local function keep(now, lastExpiry)
  local ttl = string.format('%.0f', math.max(${BUDGET_KEY_RETENTION_MS}, lastExpiry - now))
  for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ttl) end
end
`;

/** ARGV: now, capMicros, reservationId, amountMicros, ttlMs → {ok 1|0, spentMicros, reservedMicros}. */
const RESERVE = `${SWEEP}
${luaNow(1)}
local cap = tonumber(ARGV[2])
local amount = tonumber(ARGV[4])
local reserved, lastExpiry, lapsed = sweep(now)
local spent = tonumber(redis.call('GET', KEYS[1]) or '0')
local replaced = 0
local held = redis.call('HGET', KEYS[2], ARGV[3])
if held then replaced = tonumber(string.sub(held, 1, string.find(held, ':', 1, true) - 1)) end
if spent + reserved - replaced + amount > cap then
  if lapsed > 0 then keep(now, lastExpiry) end
  return {0, spent, reserved}
end
local expiresAt = now + tonumber(ARGV[5])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[4] .. ':' .. string.format('%.0f', expiresAt))
keep(now, math.max(lastExpiry, expiresAt))
return {1, spent, reserved - replaced + amount}
`;

/** ARGV: now, reservationId, actualMicros → 1 when the reservation held and was charged, else 0. */
const SETTLE = `${SWEEP}
${luaNow(1)}
local _, lastExpiry, lapsed = sweep(now)
if redis.call('HDEL', KEYS[2], ARGV[2]) == 0 then
  if lapsed > 0 then keep(now, lastExpiry) end
  return 0
end
if tonumber(ARGV[3]) > 0 then redis.call('INCRBY', KEYS[1], ARGV[3]) end
keep(now, lastExpiry)
return 1
`;

/** ARGV: now → {spentMicros, reservedMicros}. */
const READ = `${SWEEP}
${luaNow(1)}
local reserved, lastExpiry, lapsed = sweep(now)
if lapsed > 0 then keep(now, lastExpiry) end
return {tonumber(redis.call('GET', KEYS[1]) or '0'), reserved}
`;

/**
 * Budgets shared by every replica: one Lua script per decision, on the two keys of a tenant's
 * period (`<prefix>{<tenant>:<period>}:spent` and `...:reservations`, one hash tag), with time
 * from Redis `TIME` (or the test clock through {@link RedisTime}). Amounts are integer
 * micro-dollars, exact in Lua's doubles up to 2^53.
 */
export class RedisBudgetStore implements BudgetStore {
  private readonly reserveScript: RedisScript;
  private readonly settleScript: RedisScript;
  private readonly readScript: RedisScript;

  constructor(
    redis: Redis,
    private readonly keys: RedisKeys,
    private readonly time: RedisTime,
  ) {
    this.reserveScript = new RedisScript(redis, RESERVE);
    this.settleScript = new RedisScript(redis, SETTLE);
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
    assertMicros(capMicros, 'capMicros');
    assertMicros(amountMicros, 'amountMicros');
    const wholeTtlMs = reservationTtlMs(reservationId, ttlMs);
    const [ok, spentMicros, reservedMicros] = (await this.reserveScript.run(this.keysOf(tenant, period), [
      this.time.arg(),
      capMicros,
      reservationId,
      amountMicros,
      wholeTtlMs,
    ])) as [number, number, number];
    return { ok: ok === 1, spentMicros, reservedMicros };
  }

  async settle(tenant: string, period: string, reservationId: string, actualMicros: number): Promise<boolean> {
    assertMicros(actualMicros, 'actualMicros');
    const settled = await this.settleScript.run(this.keysOf(tenant, period), [
      this.time.arg(),
      reservationId,
      actualMicros,
    ]);
    return settled === 1;
  }

  async read(tenant: string, period: string): Promise<BudgetUsage> {
    const [spentMicros, reservedMicros] = (await this.readScript.run(this.keysOf(tenant, period), [
      this.time.arg(),
    ])) as [number, number];
    return { spentMicros, reservedMicros };
  }

  /** The keys of one tenant's period: the spent counter, then the reservations. */
  keysOf(tenant: string, period: string): [string, string] {
    const tag = `${tenant}:${period}`;
    return [this.keys.key(tag, 'spent'), this.keys.key(tag, 'reservations')];
  }
}

/** Checks the reservation's id and answers its TTL in whole milliseconds, rounded up. */
function reservationTtlMs(reservationId: string, ttlMs: number): number {
  if (typeof reservationId !== 'string' || reservationId.length === 0) {
    throw new RangeError('reservationId must be a non-empty string');
  }
  if (!Number.isFinite(ttlMs) || ttlMs <= 0 || Math.ceil(ttlMs) > Number.MAX_SAFE_INTEGER) {
    throw new RangeError(`ttlMs must be a finite number of milliseconds above 0, got ${String(ttlMs)}`);
  }
  return Math.ceil(ttlMs);
}
