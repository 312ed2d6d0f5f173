import type { Provider } from '@nestjs/common';
import type { RedisClient } from '../../store';
import { BudgetStore, RedisBudgetStore } from '../../budget';
import { RateLimitStore, RedisRateLimitStore } from '../../rate-limit';
import { REDIS } from '../../store';
import { JOINT_CALL_ADMISSION } from './call-admission';
import { RedisCallAdmission } from './redis-call-admission';

/**
 * The one-script admission when the rate limits and the budgets are both the Redis stores on
 * the service's connection; null otherwise (the memory stores, or an app's own store for
 * either), and the two steps run one after the other.
 */
export const jointCallAdmissionProvider: Provider = {
  provide: JOINT_CALL_ADMISSION,
  useFactory: (redis: RedisClient | null, rates: unknown, budgets: unknown): RedisCallAdmission | null =>
    redis && rates instanceof RedisRateLimitStore && budgets instanceof RedisBudgetStore
      ? new RedisCallAdmission(redis, rates, budgets)
      : null,
  inject: [REDIS, RateLimitStore, BudgetStore],
};
