/**
 * How much a call matters when its lane cannot serve everything at once: a higher class is
 * admitted first, and displaces the lowest class's newest waiting call from a full queue.
 */
export const PRIORITY_CLASSES = ['critical', 'standard', 'sheddable'] as const;

export type PriorityClass = (typeof PRIORITY_CLASSES)[number];

/** The class a call has when nobody said: the middle one. */
export const DEFAULT_PRIORITY: PriorityClass = 'standard';

/** A class's rank: 0 is served first. */
export type PriorityRank = 0 | 1 | 2;

export const STANDARD_RANK: PriorityRank = 1;

export function rankOf(priority: PriorityClass | undefined): PriorityRank {
  switch (priority) {
    case 'critical':
      return 0;
    case 'sheddable':
      return 2;
    default:
      return STANDARD_RANK;
  }
}

export function isPriorityClass(value: unknown): value is PriorityClass {
  return value === 'critical' || value === 'standard' || value === 'sheddable';
}
