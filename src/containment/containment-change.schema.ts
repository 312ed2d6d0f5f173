import { z } from 'zod';
import { CONTAINMENT_POSTURES, CONTAINMENT_STATES } from './containment-snapshot';

/** The body of `PUT /v1/admin/containment/{tenant}`: validated with it, and shown in the OpenAPI document. */
export const containmentChangeSchema = z.strictObject({
  state: z.enum(CONTAINMENT_STATES as [string, ...string[]]),
  posture: z.enum(CONTAINMENT_POSTURES as [string, ...string[]]).optional(),
  reason: z.string().max(500).optional(),
});
