import { createHash } from 'node:crypto';

/**
 * What of an upstream MCP tool's definition is pinned: what an agent reads to decide whether
 * and how to call it. A change to any of them can turn the agent against its user (a "rug
 * pull": a description that now says to send the user's files along), so each is part of the
 * pin. Absent fields stay absent (an absent description is not an empty one).
 */
export interface PinnableDefinition {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema?: unknown;
  readonly outputSchema?: unknown;
  readonly annotations?: unknown;
}

/** The fields of a {@link PinnableDefinition}, in the order a diff shows them. */
export const PINNED_FIELDS = ['name', 'description', 'inputSchema', 'outputSchema', 'annotations'] as const;

/** A sha256 in hex, as pins are written: 64 lowercase hex digits. */
export const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Only the pinned fields of `tool` (a listing's tool carries `_meta`, `title` and more). */
export function pinnableOf(tool: PinnableDefinition): PinnableDefinition {
  const picked: Record<string, unknown> = { name: tool.name };
  for (const field of PINNED_FIELDS) {
    if (field !== 'name' && tool[field] !== undefined) picked[field] = tool[field];
  }
  return picked as unknown as PinnableDefinition;
}

/**
 * The pin of a definition: sha256 (hex) of its pinned fields as canonical JSON (object keys
 * sorted at every depth, no whitespace), so a server that sends the same definition with its
 * keys in another order keeps its pin. Absent fields are left out, never written as null.
 */
export function definitionHash(definition: PinnableDefinition): string {
  return createHash('sha256')
    .update(canonicalJson(pinnableOf(definition)))
    .digest('hex');
}

/** JSON with the keys of every object sorted (by UTF-16 code units, as `Array.prototype.sort` does). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value))
    return `[${value.map((item) => canonicalJson(item === undefined ? null : item)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    const fields: string[] = [];
    for (const key of keys) {
      const field = (value as Record<string, unknown>)[key];
      if (field !== undefined) fields.push(`${JSON.stringify(key)}:${canonicalJson(field)}`);
    }
    return `{${fields.join(',')}}`;
  }
  return JSON.stringify(value);
}
