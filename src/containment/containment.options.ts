import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { intIn, nonEmptyString, oneOf } from '../common';

/** The `containment` section of the config file: default posture, the two pools, egress rules. */
export const containmentSchema = z.strictObject({
  defaultPosture: oneOf(['degraded', 'hard']).default('degraded'),
  pools: z
    .strictObject({
      normalMaxConcurrency: intIn(1, 4096).default(32),
      isolatedMaxConcurrency: intIn(1, 4096).default(2),
      pooledConnectionLifetimeMs: intIn(1_000, 86_400_000).default(300_000),
      timeoutMs: intIn(1_000, 600_000).default(30_000),
    })
    .refine((pools) => pools.isolatedMaxConcurrency <= pools.normalMaxConcurrency, {
      error: 'must not exceed normalMaxConcurrency',
      path: ['isolatedMaxConcurrency'],
    })
    .prefault({}),
  egress: z
    .strictObject({
      allowHosts: z.array(nonEmptyString(), { error: 'must be a list' }).default(['*']),
      allowPrivateCidrs: z
        .array(nonEmptyString().refine(isCidr, { error: 'must be a CIDR such as 10.0.0.0/8 or fd00::/8' }), {
          error: 'must be a list',
        })
        .default([]),
    })
    .prefault({}),
});

/** As the module reads them: every default filled in. */
export type ContainmentOptions = z.output<typeof containmentSchema>;

function isCidr(value: string): boolean {
  try {
    ipaddr.parseCIDR(value);
    return true;
  } catch {
    return false;
  }
}
