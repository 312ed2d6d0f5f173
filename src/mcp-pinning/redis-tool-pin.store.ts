import { type RedisClient, type RedisKeys, RedisReplyError, RedisScript } from '../store';
import type { PinnableDefinition } from './tool-definition-hash';
import type { PinApproval, PinRecord, PinVerdict, PinView, ToolPinStore } from './tool-pin.store';

/** The kind of the key that holds one tool's pin: `<prefix>{<tool id>}:mcppin`. */
export const TOOL_PIN_KEY_KIND = 'mcppin';

/**
 * ARGV: the seen hash, its definition's JSON. Answers the outcome, then the approved hash and
 * JSON. A pin that matches clears what was pending (the server went back to the approved one).
 */
const SEE = `local approved = redis.call('HGET', KEYS[1], 'approvedHash')
if not approved then
  redis.call('HSET', KEYS[1], 'approvedHash', ARGV[1], 'approved', ARGV[2])
  return {'pinned', ARGV[1], ARGV[2]}
end
local approvedJson = redis.call('HGET', KEYS[1], 'approved')
if approved == ARGV[1] then
  redis.call('HDEL', KEYS[1], 'pendingHash', 'pending')
  return {'same', approved, approvedJson}
end
redis.call('HSET', KEYS[1], 'pendingHash', ARGV[1], 'pending', ARGV[2])
return {'changed', approved, approvedJson}`;

/**
 * ARGV: the hash the operator expects pending, or ''. Answers the outcome, then hash and JSON
 * pairs: approved (nothing_pending: the current one, or two empty strings), pending (stale), or
 * previous and approved (approved).
 */
const APPROVE = `local pendingHash = redis.call('HGET', KEYS[1], 'pendingHash')
local approvedHash = redis.call('HGET', KEYS[1], 'approvedHash') or ''
local approvedJson = redis.call('HGET', KEYS[1], 'approved') or ''
if not pendingHash then return {'nothing_pending', approvedHash, approvedJson} end
local pendingJson = redis.call('HGET', KEYS[1], 'pending')
if ARGV[1] ~= '' and ARGV[1] ~= pendingHash then return {'stale', pendingHash, pendingJson} end
redis.call('HSET', KEYS[1], 'approvedHash', pendingHash, 'approved', pendingJson)
redis.call('HDEL', KEYS[1], 'pendingHash', 'pending')
return {'approved', approvedHash, approvedJson, pendingHash, pendingJson}`;

/** Read by a script, so it runs on the primary of the slot (a replica's copy may lag an approval). */
const VIEW = `return redis.call('HMGET', KEYS[1], 'approvedHash', 'approved', 'pendingHash', 'pending')`;

/**
 * Tool pins in Redis, one hash per tool (`<prefix>{<tool id>}:mcppin`: `approvedHash`,
 * `approved`, `pendingHash`, `pending`), so a definition pinned or approved through one replica
 * is the one every replica compares with. Like containment snapshots, these keys have no TTL
 * (see {@link ToolPinStore}); there is one per mcp tool of the registry.
 */
export class RedisToolPinStore implements ToolPinStore {
  private readonly seeScript: RedisScript;
  private readonly approveScript: RedisScript;
  private readonly viewScript: RedisScript;

  constructor(
    redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {
    this.seeScript = new RedisScript(redis, SEE);
    this.approveScript = new RedisScript(redis, APPROVE);
    this.viewScript = new RedisScript(redis, VIEW);
  }

  /** The key of `tool`'s pin. */
  pinKey(tool: string): string {
    return this.keys.key(tool, TOOL_PIN_KEY_KIND);
  }

  async see(tool: string, seen: PinRecord): Promise<PinVerdict> {
    const reply = await this.seeScript.run([this.pinKey(tool)], [seen.sha256, JSON.stringify(seen.definition)]);
    const [outcome, ...rest] = strings(reply, 3, 'tool pin see');
    if (outcome !== 'pinned' && outcome !== 'same' && outcome !== 'changed') {
      throw new RedisReplyError('tool pin see', 'an outcome');
    }
    return { outcome, approved: record(rest[0], rest[1], 'tool pin see') };
  }

  async approve(tool: string, expected?: string): Promise<PinApproval> {
    const reply = await this.approveScript.run([this.pinKey(tool)], [expected ?? '']);
    const [outcome, ...rest] = strings(reply, 3, 'tool pin approve');
    const script = 'tool pin approve';
    switch (outcome) {
      case 'nothing_pending':
        return { outcome, approved: rest[0] === '' ? undefined : record(rest[0], rest[1], script) };
      case 'stale':
        return { outcome, pending: record(rest[0], rest[1], script) };
      case 'approved':
        if (rest.length < 4) throw new RedisReplyError(script, 'five strings');
        return { outcome, previous: record(rest[0], rest[1], script), approved: record(rest[2], rest[3], script) };
      default:
        throw new RedisReplyError(script, 'an outcome');
    }
  }

  async view(tool: string): Promise<PinView> {
    const reply = await this.viewScript.run([this.pinKey(tool)], []);
    if (!Array.isArray(reply) || reply.length !== 4) throw new RedisReplyError('tool pin view', 'four fields');
    const [approvedHash, approved, pendingHash, pending] = reply as unknown[];
    return {
      approved: approvedHash == null ? undefined : record(approvedHash, approved, 'tool pin view'),
      pending: pendingHash == null ? undefined : record(pendingHash, pending, 'tool pin view'),
    };
  }
}

/** An array reply of at least `length` strings. */
function strings(reply: unknown, length: number, script: string): string[] {
  if (!Array.isArray(reply) || reply.length < length || !reply.every((item) => typeof item === 'string')) {
    throw new RedisReplyError(script, `a list of at least ${length} strings`);
  }
  return reply as string[];
}

/** A stored hash and definition JSON, checked: a key another program wrote fails the decision, never passes it. */
function record(sha256: unknown, json: unknown, script: string): PinRecord {
  if (typeof sha256 !== 'string' || typeof json !== 'string') throw new RedisReplyError(script, 'a pin');
  let definition: unknown;
  try {
    definition = JSON.parse(json);
  } catch {
    throw new RedisReplyError(script, 'a pin of JSON');
  }
  if (
    typeof definition !== 'object' ||
    definition === null ||
    typeof (definition as { name?: unknown }).name !== 'string'
  ) {
    throw new RedisReplyError(script, 'a tool definition');
  }
  return { sha256, definition: definition as PinnableDefinition };
}
