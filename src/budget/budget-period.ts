/** How long a budget lasts before it starts again: a UTC calendar day or month. */
export type BudgetPeriodKind = 'day' | 'month';

/** One budget period: spending in it counts against one cap. */
export interface BudgetPeriod {
  /** Names the period in the store: `day:2026-11-29` or `month:2026-11`. */
  key: string;
  /** Epoch milliseconds of its first instant (UTC midnight), inclusive. */
  startsAt: number;
  /** Epoch milliseconds when the next period starts, exclusive: the budget resets then. */
  resetsAt: number;
}

/**
 * The budget period that `wallNowMs` (epoch milliseconds) falls in, with UTC boundaries; the
 * instant of midnight belongs to the period it starts.
 * @throws RangeError for an unknown kind or a time that is not a valid date.
 */
export function budgetPeriod(kind: BudgetPeriodKind, wallNowMs: number): BudgetPeriod {
  const now = new Date(wallNowMs);
  if (Number.isNaN(now.getTime())) throw new RangeError(`not a valid time: ${String(wallNowMs)}`);
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth();
  switch (kind) {
    case 'day': {
      const day = now.getUTCDate();
      return {
        key: `day:${pad(year, 4)}-${pad(month + 1, 2)}-${pad(day, 2)}`,
        startsAt: utcMidnight(year, month, day),
        resetsAt: utcMidnight(year, month, day + 1),
      };
    }
    case 'month':
      return {
        key: `month:${pad(year, 4)}-${pad(month + 1, 2)}`,
        startsAt: utcMidnight(year, month, 1),
        resetsAt: utcMidnight(year, month + 1, 1),
      };
    default:
      throw new RangeError(`a budget period is 'day' or 'month', got '${String(kind)}'`);
  }
}

/** Epoch ms of UTC midnight; a day or month past the end rolls over (Dec 32 → Jan 1). */
function utcMidnight(year: number, month: number, day: number): number {
  // Not Date.UTC: it reads the years 0-99 as 1900-1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month, day);
  return date.getTime();
}

function pad(value: number, width: number): string {
  const digits = String(Math.abs(value)).padStart(width, '0');
  return value < 0 ? `-${digits}` : digits;
}
