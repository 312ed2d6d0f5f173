import { z } from 'zod';
import { name, numberIn, oneOf } from '../common';

/** The `budgets` section of the config file: period, default and per-tenant caps in USD. */
export const budgetsSchema = z.strictObject({
  period: oneOf(['day', 'month']).default('day'),
  defaultUsd: numberIn(0, 1_000_000).optional(),
  tenants: z.record(name(), numberIn(0, 1_000_000)).default({}),
});

/** As the module reads them: every default filled in. */
export type BudgetOptions = z.output<typeof budgetsSchema>;
