import { uniqueIds } from '../common';
import type { RedisClient } from '../store';
import { luaNow, type RedisKeys, RedisReplyError, RedisScript, type RedisTime, replyFlag } from '../store';
import { DEFAULT_IDEMPOTENCY_BOUNDS, type IdempotencyBounds } from './idempotency-bounds';
import { assertLeaseMs, type IdempotencyClaim, type IdempotencyStore, type StoredOutcome } from './idempotency.store';
import { keptOutcome, notKeptOutcome } from './kept-outcome';
import { storedOutcomeOf } from './stored-outcomes';

/**
 * How long a record outlives its lease or its retention in Redis, in milliseconds. The scripts
 * decide by comparing `leaseUntil` / `expiresAt` with their own `now`; the TTL only reclaims
 * the memory afterwards, so it must never end a record before the script would.
 */
export const REDIS_IDEMPOTENCY_TTL_MARGIN_MS = 5_000;

// One hash per key: fingerprint, state ('in_flight' | 'completed'), and either token +
// leaseUntil (in flight) or outcome (JSON) + expiresAt (completed). Times are epoch ms.

/**
 * ARGV: now, fingerprint, leaseMs, token, margin. Answers {status[, token | outcome]}. A claim
 * that finds its own token in flight is answered `claimed`: it is the same claim sent again (its
 * reply was lost and the client re-sent it), not a second call.
 */
const CLAIM = `${luaNow(1)}
local record = redis.call('HMGET', KEYS[1], 'state', 'fingerprint', 'leaseUntil', 'expiresAt', 'outcome', 'token')
local state, fingerprint = record[1], record[2]
local live = (state == 'in_flight' and (tonumber(record[3]) or 0) > now)
  or (state == 'completed' and (tonumber(record[4]) or 0) > now)
if live then
  if fingerprint ~= ARGV[2] then return {'conflict'} end
  if state == 'in_flight' and record[6] == ARGV[4] then return {'claimed', ARGV[4]} end
  if state == 'in_flight' then return {'in_flight'} end
  return {'completed', record[5]}
end
local leaseMs = tonumber(ARGV[3])
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'state', 'in_flight', 'fingerprint', ARGV[2], 'token', ARGV[4], 'leaseUntil', now + leaseMs)
redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil(leaseMs + tonumber(ARGV[5]))))
return {'claimed', ARGV[4]}`;

/** ARGV: now, token, outcome JSON, retentionMs, margin. Answers 1 when it stored the outcome. */
const COMPLETE = `${luaNow(1)}
local record = redis.call('HMGET', KEYS[1], 'state', 'token')
if record[1] ~= 'in_flight' or record[2] ~= ARGV[2] then return 0 end
local retentionMs = tonumber(ARGV[4])
redis.call('HDEL', KEYS[1], 'token', 'leaseUntil')
redis.call('HSET', KEYS[1], 'state', 'completed', 'outcome', ARGV[3], 'expiresAt', now + retentionMs)
redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil(retentionMs + tonumber(ARGV[5]))))
return 1`;

/**
 * ARGV: now, token, leaseMs, margin. Answers 1 when the claim was the token's and live, now held
 * until at least now + leaseMs (the record's TTL following), else 0, writing nothing.
 */
const RENEW = `${luaNow(1)}
local record = redis.call('HMGET', KEYS[1], 'state', 'token', 'leaseUntil')
local leaseUntil = tonumber(record[3]) or 0
if record[1] ~= 'in_flight' or record[2] ~= ARGV[2] or leaseUntil <= now then return 0 end
leaseUntil = math.max(leaseUntil, now + tonumber(ARGV[3]))
redis.call('HSET', KEYS[1], 'leaseUntil', leaseUntil)
redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil(leaseUntil - now + tonumber(ARGV[4]))))
return 1`;

/** ARGV: token. Answers 1 when it forgot the claim. */
const RELEASE = `local record = redis.call('HMGET', KEYS[1], 'state', 'token')
if record[1] ~= 'in_flight' or record[2] ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1`;

/**
 * Idempotency records in Redis, shared by every replica: one hash per scoped key
 * (`<prefix>{<key>}:idem`) and one script per decision, with the semantics of
 * {@link MemoryIdempotencyStore}. A claim holds for its lease by the script's clock (Redis
 * `TIME`, or the test clock through {@link RedisTime}); a lapsed lease or a record past its
 * retention is taken over with a fresh random token.
 *
 * Of the memory store's bounds only `maxEntryBytes` holds here: an outcome larger than that is
 * not sent, and its key is finished without it (replayed as `notKeptOutcome`), as in memory.
 * There is no count and no total in bytes: those bound the process's heap, which a Redis store
 * does not fill. In Redis every write sets a TTL (the lease or the retention, plus
 * {@link REDIS_IDEMPOTENCY_TTL_MARGIN_MS}), so a record never outlives its purpose by more than
 * the margin: what one tenant holds is at most its calls in a retention window times
 * `maxEntryBytes`, and Redis's own `maxmemory` bounds the rest. (A byte count per tenant would be
 * a key in the tenant's Cluster slot, not the record's: a script could not keep both.)
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  private readonly claimScript: RedisScript;
  private readonly completeScript: RedisScript;
  private readonly releaseScript: RedisScript;
  private readonly renewScript: RedisScript;

  private readonly maxEntryBytes: number;

  constructor(
    redis: RedisClient,
    private readonly keys: RedisKeys,
    private readonly time: RedisTime,
    bounds: Pick<IdempotencyBounds, 'maxEntryBytes'> = DEFAULT_IDEMPOTENCY_BOUNDS,
  ) {
    if (!(Number.isSafeInteger(bounds.maxEntryBytes) && bounds.maxEntryBytes >= 0)) {
      throw new RangeError('maxEntryBytes must be an integer of at least 0');
    }
    this.maxEntryBytes = bounds.maxEntryBytes;
    this.claimScript = new RedisScript(redis, CLAIM);
    this.completeScript = new RedisScript(redis, COMPLETE);
    this.releaseScript = new RedisScript(redis, RELEASE);
    this.renewScript = new RedisScript(redis, RENEW);
  }

  // The tenant is not needed: nothing here is counted by tenant (see the class's comment).
  async claim(
    key: string,
    fingerprint: string,
    leaseMs: number,
    _tenant: string,
    token: string = uniqueIds.next(),
  ): Promise<IdempotencyClaim> {
    // The token is in the command's arguments: a re-send of the command carries the same one.
    const answer = await this.claimScript.run(
      [this.recordKey(key)],
      [this.time.arg(), fingerprint, leaseMs, token, REDIS_IDEMPOTENCY_TTL_MARGIN_MS],
    );
    return claimOf(answer);
  }

  async complete(key: string, token: string, outcome: StoredOutcome, retentionMs: number): Promise<void> {
    await this.completeScript.run(
      [this.recordKey(key)],
      [this.time.arg(), token, this.keptJson(outcome), retentionMs, REDIS_IDEMPOTENCY_TTL_MARGIN_MS],
    );
  }

  async release(key: string, token: string): Promise<void> {
    await this.releaseScript.run([this.recordKey(key)], [token]);
  }

  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    assertLeaseMs(leaseMs);
    const renewed = await this.renewScript.run(
      [this.recordKey(key)],
      [this.time.arg(), token, leaseMs, REDIS_IDEMPOTENCY_TTL_MARGIN_MS],
    );
    return replyFlag(renewed, 'idempotency renew');
  }

  /** The outcome's JSON, or the stand-in a key whose outcome is too large answers with. */
  private keptJson(outcome: StoredOutcome): string {
    return keptOutcome(outcome, this.maxEntryBytes)?.json ?? JSON.stringify(notKeptOutcome(outcome.attempts));
  }

  private recordKey(key: string): string {
    return this.keys.key(key, 'idem');
  }
}

/** The claim script's reply, or the typed error for anything it does not answer. */
export function claimOf(answer: unknown): IdempotencyClaim {
  const [status, value] = Array.isArray(answer) ? (answer as unknown[]) : [];
  switch (status) {
    case 'claimed':
      if (typeof value === 'string') return { status, token: value };
      break;
    case 'completed': {
      const outcome = typeof value === 'string' ? storedOutcomeOf(value) : undefined;
      if (outcome) return { status, outcome };
      break;
    }
    case 'in_flight':
    case 'conflict':
      return { status };
  }
  throw new RedisReplyError('idempotency claim', 'a claim, or a stored outcome of this version');
}
