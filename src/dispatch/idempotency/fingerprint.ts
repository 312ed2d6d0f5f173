import { createHash } from 'node:crypto';

/**
 * The SHA-256 of the arguments' canonical JSON (object keys sorted at every depth), so the
 * same arguments in another key order have the same fingerprint.
 */
export function argumentsFingerprint(args: unknown): string {
  return createHash('sha256').update(canonicalJson(args)).digest('hex');
}

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const fields = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`);
    return `{${fields.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * One string for a key in its scope: a tenant's key never meets another tenant's or another
 * tool's, and the raw key (caller input) is neither stored nor sent upstream.
 */
export function scopedIdempotencyKey(tenant: string, toolId: string, key: string): string {
  return createHash('sha256').update(`${tenant}\n${toolId}\n${key}`).digest('hex');
}
