import { canonicalJson, PINNED_FIELDS, type PinnableDefinition } from './tool-definition-hash';

/** One field that differs: its value before and after; a side is absent where the definition has no such field. */
export interface FieldChange {
  readonly old?: unknown;
  readonly new?: unknown;
}

/** The pinned fields that differ between two definitions of a tool, by field, in {@link PINNED_FIELDS} order. */
export type DefinitionDiff = Partial<Record<(typeof PINNED_FIELDS)[number], FieldChange>>;

/**
 * What changed from `before` to `after`, field by field, compared as canonical JSON (keys in
 * another order are no change). Only the pinned fields of the upstream's own definition: never
 * the entry's headers, URL or anything else of the config.
 */
export function definitionDiff(before: PinnableDefinition | undefined, after: PinnableDefinition): DefinitionDiff {
  const diff: DefinitionDiff = {};
  for (const field of PINNED_FIELDS) {
    const old = before?.[field];
    const now = after[field];
    if (before !== undefined && canonicalJson(old) === canonicalJson(now)) continue;
    const change: { old?: unknown; new?: unknown } = {};
    if (old !== undefined) change.old = old;
    if (now !== undefined) change.new = now;
    if (Object.keys(change).length > 0) diff[field] = change;
  }
  return diff;
}
