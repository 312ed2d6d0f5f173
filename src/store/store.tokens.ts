/** Injection token of the Redis connection; null with the memory store. */
export const REDIS = Symbol('REDIS');

/** Injection token of the Redis stores' time: Redis `TIME`; tests may put it on their clock. */
export const REDIS_TIME = Symbol('REDIS_TIME');

/** Injection token of the key names under the configured prefix (`RedisKeys`). */
export const REDIS_KEYS = Symbol('REDIS_KEYS');
