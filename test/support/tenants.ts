import { createHash } from 'node:crypto';

/** The SHA-256 (hex) of a key: what `auth.apiKeys` holds in place of the key. */
export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The admin token of the tests' configs (`auth.adminToken`), and its header. */
export const ADMIN_TOKEN = 'admin-token-0123456789abcdef';
export const AS_ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** A test tenant: its API key, its `auth.apiKeys` entry, and the header that presents the key. */
export function testTenant(tenant: string, key = `${tenant}-key-0123456789`) {
  return { tenant, key, apiKey: { sha256: sha256(key), tenant }, headers: { authorization: `Bearer ${key}` } };
}
