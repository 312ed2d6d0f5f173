import fc from 'fast-check';
import { budgetPeriod, type BudgetPeriodKind } from './budget-period';

const at = (iso: string) => Date.parse(iso);

describe('budgetPeriod', () => {
  describe('day', () => {
    it('names the UTC day and runs from its midnight to the next', () => {
      expect(budgetPeriod('day', at('2026-11-29T13:45:07.123Z'))).toEqual({
        key: 'day:2026-11-29',
        startsAt: at('2026-11-29T00:00:00.000Z'),
        resetsAt: at('2026-11-30T00:00:00.000Z'),
      });
    });

    it('puts the instant of midnight in the day it starts', () => {
      expect(budgetPeriod('day', at('2026-11-30T00:00:00.000Z')).key).toBe('day:2026-11-30');
      expect(budgetPeriod('day', at('2026-11-29T23:59:59.999Z')).key).toBe('day:2026-11-29');
    });

    it.each([
      ['the end of a 30-day month', '2026-11-30T12:00:00Z', 'day:2026-11-30', '2026-12-01T00:00:00Z'],
      ['the end of a 31-day month', '2026-01-31T12:00:00Z', 'day:2026-01-31', '2026-02-01T00:00:00Z'],
      ['the end of February in a common year', '2026-02-28T12:00:00Z', 'day:2026-02-28', '2026-03-01T00:00:00Z'],
      ['the 28th of February in a leap year', '2028-02-28T12:00:00Z', 'day:2028-02-28', '2028-02-29T00:00:00Z'],
      ['the leap day', '2028-02-29T23:59:59.999Z', 'day:2028-02-29', '2028-03-01T00:00:00Z'],
      ['the end of the year', '2026-12-31T23:59:59.999Z', 'day:2026-12-31', '2027-01-01T00:00:00Z'],
    ])('rolls over at %s', (_, now, key, resetsAt) => {
      expect(budgetPeriod('day', at(now))).toMatchObject({ key, resetsAt: at(resetsAt) });
    });

    it('uses UTC, whatever the local time zone says', () => {
      // 23:30 in New York on Nov 29 is already Nov 30 in UTC.
      expect(budgetPeriod('day', at('2026-11-29T23:30:00-05:00')).key).toBe('day:2026-11-30');
    });
  });

  describe('month', () => {
    it('names the UTC month and runs from its first midnight to the next month', () => {
      expect(budgetPeriod('month', at('2026-11-29T13:45:07.123Z'))).toEqual({
        key: 'month:2026-11',
        startsAt: at('2026-11-01T00:00:00.000Z'),
        resetsAt: at('2026-12-01T00:00:00.000Z'),
      });
    });

    it('puts the instant of midnight on the first in the month it starts', () => {
      expect(budgetPeriod('month', at('2026-12-01T00:00:00.000Z')).key).toBe('month:2026-12');
      expect(budgetPeriod('month', at('2026-11-30T23:59:59.999Z')).key).toBe('month:2026-11');
    });

    it.each([
      ['February of a common year', '2026-02-14T00:00:00Z', 'month:2026-02', '2026-02-01', '2026-03-01'],
      ['February of a leap year', '2028-02-29T12:00:00Z', 'month:2028-02', '2028-02-01', '2028-03-01'],
      ['December', '2026-12-31T23:59:59.999Z', 'month:2026-12', '2026-12-01', '2027-01-01'],
      ['January', '2027-01-01T00:00:00.000Z', 'month:2027-01', '2027-01-01', '2027-02-01'],
    ])('spans %s', (_, now, key, startsAt, resetsAt) => {
      expect(budgetPeriod('month', at(now))).toEqual({
        key,
        startsAt: at(`${startsAt}T00:00:00Z`),
        resetsAt: at(`${resetsAt}T00:00:00Z`),
      });
    });

    it('lasts 28, 29, 30 or 31 days', () => {
      const days = (now: string) => {
        const period = budgetPeriod('month', at(now));
        return (period.resetsAt - period.startsAt) / 86_400_000;
      };
      expect([
        days('2026-02-10T00:00Z'),
        days('2028-02-10T00:00Z'),
        days('2026-04-10T00:00Z'),
        days('2026-05-10T00:00Z'),
      ]).toEqual([28, 29, 30, 31]);
    });
  });

  it('pads years before 1000 to four digits and keeps the years 0-99 as they are', () => {
    expect(budgetPeriod('month', at('0050-06-15T12:00:00Z'))).toEqual({
      key: 'month:0050-06',
      startsAt: at('0050-06-01T00:00:00Z'),
      resetsAt: at('0050-07-01T00:00:00Z'),
    });
    expect(budgetPeriod('day', at('0099-12-31T12:00:00Z'))).toMatchObject({
      key: 'day:0099-12-31',
      resetsAt: at('0100-01-01T00:00:00Z'),
    });
  });

  it.each([[Number.NaN], [Infinity], [8.64e15 + 1]])('refuses the time %p with a RangeError', (now) => {
    expect(() => budgetPeriod('day', now)).toThrow(RangeError);
  });

  it('refuses an unknown kind with a RangeError', () => {
    expect(() => budgetPeriod('week' as BudgetPeriodKind, 0)).toThrow(RangeError);
  });

  describe('properties', () => {
    const kinds = fc.constantFrom<BudgetPeriodKind>('day', 'month');
    // Epoch ms from 1970 to 2200.
    const times = fc.integer({ min: 0, max: Date.UTC(2200, 0, 1) });

    it('contains now: startsAt <= now < resetsAt, both at UTC midnight', () => {
      fc.assert(
        fc.property(kinds, times, (kind, now) => {
          const { startsAt, resetsAt } = budgetPeriod(kind, now);
          expect(startsAt).toBeLessThanOrEqual(now);
          expect(resetsAt).toBeGreaterThan(now);
          expect(startsAt % 86_400_000).toBe(0);
          expect(resetsAt % 86_400_000).toBe(0);
        }),
      );
    });

    it('answers the same period for every instant within it', () => {
      fc.assert(
        fc.property(kinds, times, fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (kind, now, share) => {
          const period = budgetPeriod(kind, now);
          const other = period.startsAt + Math.floor(share * (period.resetsAt - period.startsAt));
          expect(budgetPeriod(kind, other)).toEqual(period);
          expect(budgetPeriod(kind, period.resetsAt - 1)).toEqual(period);
        }),
      );
    });

    it('starts the next period, under a new key, exactly at resetsAt', () => {
      fc.assert(
        fc.property(kinds, times, (kind, now) => {
          const period = budgetPeriod(kind, now);
          const next = budgetPeriod(kind, period.resetsAt);
          expect(next.startsAt).toBe(period.resetsAt);
          expect(next.key).not.toBe(period.key);
          expect(next.key > period.key).toBe(true);
          expect(budgetPeriod(kind, period.startsAt - 1).resetsAt).toBe(period.startsAt);
        }),
      );
    });

    it('names the period by the UTC calendar date of now', () => {
      fc.assert(
        fc.property(times, (now) => {
          const iso = new Date(now).toISOString();
          expect(budgetPeriod('day', now).key).toBe(`day:${iso.slice(0, 10)}`);
          expect(budgetPeriod('month', now).key).toBe(`month:${iso.slice(0, 7)}`);
        }),
      );
    });
  });
});
