import { z } from 'zod';
import { oneOf } from '../common';
import { PRIORITY_CLASSES } from './priority';

/** A priority class in the config file. */
export const priorityClass = () => oneOf(PRIORITY_CLASSES);

/** The `priority` section of the config file: the highest class a caller may ask for, and each tenant's own. */
export const prioritySchema = z.strictObject({
  ceiling: priorityClass().default('standard'),
  tenants: z.record(z.string(), priorityClass()).default({}),
});
