import { z } from 'zod';
import { allowedHostList, allowedOriginList, bool, name, type OptionsOf } from '../common';

/** Who may call: the API keys and their tenants, anonymous callers, the admin token, browser pages. */
export const authSchema = z.strictObject({
  allowAnonymous: bool().default(false),
  adminToken: z.string({ error: 'must be a string' }).min(16, { error: 'must be at least 16 characters' }).optional(),
  apiKeys: z
    .array(
      z.strictObject({
        sha256: z.string({ error: 'must be a string' }).regex(/^[0-9a-fA-F]{64}$/, {
          error: 'must be the SHA-256 of the key, 64 hex digits',
        }),
        tenant: name().refine((tenant) => tenant !== 'anonymous', {
          error: "'anonymous' is the tenant of callers without a key; it cannot be configured",
        }),
      }),
      { error: 'must be a list' },
    )
    .default([]),
  /**
   * Web pages that may call without a key (with `allowAnonymous`), beside loopback pages, which
   * always may: a request from any other page is `403` (a DNS-rebinding page would otherwise run
   * tools and spend the `anonymous` budget). Requests without `Origin`, and callers with a key,
   * are never refused for it. `'*'`: every page.
   */
  allowedOrigins: allowedOriginList,
  /**
   * Host names (no port) the service is reached by, beside loopback ones, checked for callers
   * without a key: empty (the default), `Host` is not checked; listed, any other `Host` is `403`.
   */
  allowedHosts: allowedHostList,
});

/** `AuthModule.forRoot`'s options, as the config file's `auth` section says them. */
export type AuthOptions = OptionsOf<typeof authSchema>;
