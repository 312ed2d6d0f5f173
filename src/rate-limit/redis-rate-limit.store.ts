import type { RedisClient } from '../store';
import { luaNow, RedisKeys, RedisReplyError, RedisScript, RedisTime, replyIntegers } from '../store';
import type { BucketRule, RateLimitDecision, RateLimitStore } from './rate-limit.store';
import { assertAdjust, assertTake, UNITS_PER_TOKEN } from './token-bucket';

/** The kind of the one hash that holds a key's buckets: `<prefix>{<key>}:rl`. */
export const RATE_LIMIT_KEY_KIND = 'rl';

/** Kept past the moment the last bucket is full, so a hash never expires while it still counts. */
const TTL_MARGIN_MS = 1_000;

/*
 * The arithmetic of token-bucket.ts in Lua (numbers are doubles there too). One hash per key;
 * per bucket the fields `<name>:u` (level in 1/60 000 tokens at `<name>:at`), `<name>:at`
 * (ms of the script's clock) and `<name>:full` (when that bucket is full again). The script's
 * `now` comes first (see luaNow), then three arguments per bucket from ARGV[firstArg]: name,
 * perMinute, amount.
 *
 * A decision is four Redis commands whatever the number of buckets (TIME, HGETALL, HSET,
 * PEXPIRE or DEL; each command inside a script costs Redis 0.5-1 µs, on one thread for the
 * whole fleet). The hash is read whole once, since the TTL must cover the buckets of every
 * name, asked now or not.
 *
 * `decideTake` only reads, `commitTake` writes what it decided: a script may decide something
 * else in between (the call admission's budget) and take nothing when that refuses.
 */
export function rateLimitLua(keyExpression: string, firstArg: number): string {
  return `local key = ${keyExpression}
local U = ${UNITS_PER_TOKEN}
local count = (#ARGV - ${firstArg - 1}) / 3

local stored = {}
do
  local fields = redis.call('HGETALL', key)
  for i = 1, #fields, 2 do stored[fields[i]] = fields[i + 1] end
end

local function bucket(i)
  local base = ${firstArg} + 3 * (i - 1)
  return ARGV[base], tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2])
end

local function level(name, perMinute)
  local cap = perMinute * U
  local units = tonumber(stored[name .. ':u'])
  if not units then return cap, now end
  local at = tonumber(stored[name .. ':at'])
  local elapsed = now - at
  if elapsed < 0 then elapsed = 0 end
  units = units + elapsed * perMinute
  if units > cap then units = cap end
  if at < now then at = now end
  return units, at
end

local function untilFull(units, perMinute)
  local missing = perMinute * U - units
  if missing < 0 then missing = 0 end
  return missing / perMinute
end

local writes = {}
local function write(name, perMinute, units, at)
  local full = at + untilFull(units, perMinute)
  stored[name .. ':full'] = full
  local n = #writes
  writes[n + 1], writes[n + 2] = name .. ':u', units
  writes[n + 3], writes[n + 4] = name .. ':at', at
  writes[n + 5], writes[n + 6] = name .. ':full', full
end

-- Writes the buckets, then expires the hash when its last bucket (of any name, asked now or
-- not) is full, plus a margin; deletes it at once when all are full, since a missing bucket is
-- a full one.
local function flush()
  local latest = now
  for field, value in pairs(stored) do
    if string.sub(field, -5) == ':full' then
      local t = tonumber(value)
      if t > latest then latest = t end
    end
  end
  if latest > now then
    if #writes > 0 then redis.call('HSET', key, unpack(writes)) end
    redis.call('PEXPIRE', key, math.ceil(latest - now) + ${TTL_MARGIN_MS})
  elseif next(stored) ~= nil then
    redis.call('DEL', key)
  end
end

-- Every bucket's level now, and how long until every amount fits (0: they fit now).
local function decideTake()
  local levels, ats = {}, {}
  local retry = 0
  for i = 1, count do
    local name, perMinute, amount = bucket(i)
    levels[i], ats[i] = level(name, perMinute)
    if amount > 0 then
      local needed = amount * U
      local wait = 0
      if amount > perMinute then
        wait = math.ceil(needed / perMinute)
      elseif levels[i] < needed then
        wait = math.ceil((needed - levels[i]) / perMinute)
      end
      if wait > retry then retry = wait end
    end
  end
  return levels, ats, retry
end

-- Takes every amount from the levels decideTake answered (which then say what is left).
local function commitTake(levels, ats)
  for i = 1, count do
    local name, perMinute, amount = bucket(i)
    if amount > 0 then levels[i] = levels[i] - amount * U end
    write(name, perMinute, levels[i], ats[i])
  end
  flush()
end

-- {allowed (1|0), retryAfterMs, remaining per bucket..., resetMs per bucket...}, all integers.
local function takeReply(allowed, retry, levels)
  local reply = { allowed, retry }
  for i = 1, count do
    local units = levels[i]
    if units < 0 then units = 0 end
    reply[2 + i] = math.floor(units / U)
  end
  for i = 1, count do
    local _, perMinute = bucket(i)
    reply[2 + count + i] = math.ceil(untilFull(levels[i], perMinute))
  end
  return reply
end
`;
}

/** KEYS[1] the hash; ARGV[1] the time, then the buckets. Answers {@link takeReply}'s integers. */
const TAKE = `${luaNow(1)}
${rateLimitLua('KEYS[1]', 2)}
local levels, ats, retry = decideTake()
if retry == 0 then commitTake(levels, ats) end
return takeReply(retry == 0 and 1 or 0, retry, levels)
`;

const ADJUST = `${luaNow(1)}
${rateLimitLua('KEYS[1]', 2)}
for i = 1, count do
  local name, perMinute, amount = bucket(i)
  local units, at = level(name, perMinute)
  units = units + amount * U
  if units > perMinute * U then units = perMinute * U end
  write(name, perMinute, units, at)
end
flush()
return 1
`;

/**
 * The rate-limit store shared by replicas: one Redis hash per key, one Lua script per decision
 * (atomic, so concurrent takes on any replica never over-admit), time from Redis `TIME` (or a
 * test clock through {@link RedisTime}). The hash expires 1 s after its last bucket is full;
 * correctness never depends on that expiry, since a missing bucket is a full one.
 */
export class RedisRateLimitStore implements RateLimitStore {
  private readonly takeScript: RedisScript;
  private readonly adjustScript: RedisScript;

  constructor(
    redis: RedisClient,
    private readonly keys: RedisKeys,
    private readonly time: RedisTime,
  ) {
    this.takeScript = new RedisScript(redis, TAKE);
    this.adjustScript = new RedisScript(redis, ADJUST);
  }

  async take(key: string, rules: readonly BucketRule[], amounts: readonly number[]): Promise<RateLimitDecision> {
    assertTake(rules, amounts);
    return takeDecision(await this.takeScript.run([this.hashKey(key)], this.args(rules, amounts)), rules);
  }

  async adjust(key: string, rules: readonly BucketRule[], amounts: readonly number[]): Promise<void> {
    assertAdjust(rules, amounts);
    await this.adjustScript.run([this.hashKey(key)], this.args(rules, amounts));
  }

  /** The hash that holds the buckets of `key`. */
  hashKey(key: string): string {
    return this.keys.key(key, RATE_LIMIT_KEY_KIND);
  }

  private args(rules: readonly BucketRule[], amounts: readonly number[]): string[] {
    const args = [this.time.arg()];
    pushBucketArgs(args, rules, amounts);
    return args;
  }
}

/** Appends each bucket's three arguments (name, perMinute, amount) to a script's arguments. */
export function pushBucketArgs(args: string[], rules: readonly BucketRule[], amounts: readonly number[]): void {
  rules.forEach((rule, index) => args.push(rule.name, String(rule.perMinute), String(amounts[index])));
}

/** How many integers `takeReply` answers for these rules. */
export function takeReplyLength(rules: readonly BucketRule[]): number {
  return 2 + 2 * rules.length;
}

/**
 * The decision in the first {@link takeReplyLength} integers of a script's reply (a script may
 * answer more after them); throws when they are not there.
 */
export function takeDecision(reply: unknown, rules: readonly BucketRule[]): RateLimitDecision {
  const script = 'rate-limit take';
  const integers = replyIntegers(reply, takeReplyLength(rules), script);
  if (integers[0] > 1) throw new RedisReplyError(script, 'a decision of 0 or 1');
  return {
    allowed: integers[0] === 1,
    retryAfterMs: integers[1],
    buckets: rules.map((rule, index) => ({
      name: rule.name,
      remaining: integers[2 + index],
      resetMs: integers[2 + rules.length + index],
    })),
  };
}
