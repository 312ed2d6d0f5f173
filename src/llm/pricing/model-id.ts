// A dated snapshot id is its family's id and a release date: OpenAI writes the date as
// `-YYYY-MM-DD` (`gpt-4o-2024-08-06`), Anthropic as `-YYYYMMDD` (`claude-sonnet-4-5-20250929`).
const DASHED_DATE = /-(20\d{2})-(\d{2})-(\d{2})$/;
const COMPACT_DATE = /-(20\d{2})(\d{2})(\d{2})$/;

/**
 * The family id of a dated snapshot id, or undefined when `model` does not end in a date. The
 * rule, and the only one: a trailing `-YYYY-MM-DD` or `-YYYYMMDD` that is a real calendar date of 2000-2099
 * is removed, once (`claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`, `gpt-4o-2024-08-06` →
 * `gpt-4o`). Nothing else is trimmed or matched by prefix, so an id that merely starts like a
 * priced one (`gpt-4o-mini-tts`, `claude-opus-4-1`) never takes another model's price.
 */
export function withoutDateSuffix(model: string): string | undefined {
  const match = DASHED_DATE.exec(model) ?? COMPACT_DATE.exec(model);
  if (!match) return undefined;
  const [suffix, year, month, day] = match;
  if (!isCalendarDate(Number(year), Number(month), Number(day))) return undefined;
  const family = model.slice(0, -suffix.length);
  return family.length > 0 ? family : undefined;
}

function isCalendarDate(year: number, month: number, day: number): boolean {
  // Date.UTC rolls an impossible day over into the next month; a real date comes back unchanged.
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}
