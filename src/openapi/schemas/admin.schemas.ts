import { z } from 'zod';
import { CONTAINMENT_POSTURES, CONTAINMENT_STATES } from '../../containment';
import { circuitSnapshotSchema } from './introspection.schemas';

/** A tenant's containment snapshot. */
export const containmentSnapshotSchema = z.strictObject({
  tenant: z.string(),
  state: z.enum(CONTAINMENT_STATES as [string, ...string[]]),
  posture: z.enum(CONTAINMENT_POSTURES as [string, ...string[]]),
  reason: z.string().max(500),
  version: z.int().min(1).meta({ description: 'One higher with every change of this tenant.' }),
  updatedAt: z.string().meta({ description: 'ISO time of the change.' }),
});

/** `GET /v1/admin/budgets/{tenant}`: the current period. */
export const budgetViewSchema = z.strictObject({
  capUsd: z.number().nullable().meta({ description: 'USD; null when the tenant has no cap.' }),
  spentUsd: z.number(),
  reservedUsd: z.number().meta({ description: 'Held by attempts in flight.' }),
  period: z.string(),
  resetsAt: z.string().meta({ description: 'ISO time.' }),
});

/** `POST /v1/admin/circuits/{name}/open` and `/close`: the circuit after the change. */
export const circuitAdminAnswerSchema = circuitSnapshotSchema.extend({ circuit: z.string() });
