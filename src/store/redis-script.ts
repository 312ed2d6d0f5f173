import { createHash } from 'node:crypto';
import type { RedisClient } from './redis-connection';
import { batchWritesThisTick } from './redis-connection';

/**
 * One Lua script, run with EVALSHA and sent in full (EVAL) only when Redis answers NOSCRIPT
 * (a restart or SCRIPT FLUSH) — never after a timeout, which may have run it already.
 */
export class RedisScript {
  private readonly sha: string;

  constructor(
    private readonly redis: RedisClient,
    private readonly source: string,
  ) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(keys: readonly string[], args: ReadonlyArray<string | number>): Promise<unknown> {
    batchWritesThisTick(this.redis);
    try {
      return await this.redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return this.redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}
