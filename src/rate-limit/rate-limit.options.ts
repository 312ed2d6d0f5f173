import { z } from 'zod';
import { bool, intIn, name, oneOf } from '../common';

/** One tenant's limits: requests and tokens per minute, each unlimited when absent. */
const rateLimit = z.strictObject({ rpm: intIn(1, 10_000_000).optional(), tpm: intIn(1, 1_000_000_000).optional() });

/** The `rateLimits` section of the config file: per-tenant rpm/tpm, fail mode, enforce. */
export const rateLimitsSchema = z.strictObject({
  default: rateLimit.optional(),
  tenants: z.record(name(), rateLimit).default({}),
  failMode: oneOf(['open', 'closed']).default('open'),
  enforce: bool().default(true),
});

/** As the module reads them: every default filled in. */
export type RateLimitOptions = z.output<typeof rateLimitsSchema>;
