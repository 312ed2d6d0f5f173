import type { Clock } from '../common';

/**
 * Key names under the configured prefix, each with a hash tag, so every key one decision
 * touches lands on one Redis Cluster slot (docs/pitfalls.md #9): `<prefix>{<tag>}:<kind>`.
 */
export class RedisKeys {
  constructor(readonly prefix: string) {}

  key(tag: string, kind: string): string {
    return `${this.prefix}{${tag}}:${kind}`;
  }
}

/**
 * Where a Redis script takes its time from. In production from Redis itself (`TIME`), so
 * replicas with skewed clocks agree (docs/pitfalls.md #9); a test may pass a clock to run the same
 * scripts in virtual time. Scripts read an empty argument as "ask Redis".
 */
export class RedisTime {
  constructor(private readonly clock?: Clock) {}

  /** The script argument: epoch milliseconds from the test clock, or '' for Redis `TIME`. */
  arg(): string {
    return this.clock ? String(Math.floor(this.clock.wallNow())) : '';
  }
}

/** Lua: the script's `now` in epoch milliseconds, from ARGV[index] or Redis `TIME`. */
export function luaNow(index: number): string {
  return `local now = tonumber(ARGV[${index}])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end`;
}
