import { z } from 'zod';
import { isOriginText } from './origin-policy';

/**
 * Origins of browser pages a route reachable from a browser lets call, beside loopback pages:
 * each exactly as a browser sends it (`https://app.example.com`), or `'*'` for every page.
 */
export const allowedOriginList = z
  .array(
    z.string({ error: 'must be a string' }).refine(isOriginText, {
      error: "must be an origin (http(s)://host[:port], no path) or '*'",
    }),
  )
  .max(1_000)
  .default([]);

/** Host names (no port) the service is reached by, beside loopback ones; empty: `Host` is not checked. */
export const allowedHostList = z
  .array(
    z.string({ error: 'must be a string' }).regex(/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]{1,253})$/, {
      error: 'must be a host name or an address, without a port',
    }),
  )
  .max(1_000)
  .default([]);
