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

/** One definition of an upstream MCP tool as pinned: its hash and the fields the hash covers. */
const pinRecordSchema = z.strictObject({
  sha256: z.string().meta({ description: 'sha256 (hex) of the definition as canonical JSON.' }),
  definition: z
    .strictObject({
      name: z.string(),
      description: z.string().optional(),
      inputSchema: z.record(z.string(), z.unknown()).optional(),
      outputSchema: z.record(z.string(), z.unknown()).optional(),
      annotations: z.record(z.string(), z.unknown()).optional(),
    })
    .meta({ description: "The upstream server's own words: read them before approving." }),
});

/** The fields that differ, each with its value before (`old`) and after (`new`); a side is absent where the field is. */
const definitionChangesSchema = z
  .record(z.string(), z.strictObject({ old: z.unknown().optional(), new: z.unknown().optional() }))
  .meta({ description: 'By field: name, description, inputSchema, outputSchema, annotations.' });

/** `GET /v1/admin/mcp/tools/{name}`: the tool's pin. */
export const mcpToolPinSchema = z.strictObject({
  tool: z.string(),
  pinning: z.enum(['warn', 'enforce']),
  state: z.enum(['unseen', 'approved', 'changed', 'unchecked']).meta({
    description: '`changed` under `enforce`: quarantined (not listed, calls refused `tool_changed`).',
  }),
  pinnedInConfig: z.boolean(),
  seenSha256: z.string().optional().meta({ description: 'The hash of what this replica saw last.' }),
  approved: z
    .union([pinRecordSchema, z.strictObject({ sha256: z.string() })])
    .optional()
    .meta({ description: 'Only the hash when the config pins the tool.' }),
  pending: pinRecordSchema.optional().meta({ description: 'The definition an approval would approve.' }),
  changes: definitionChangesSchema,
});

/** `POST /v1/admin/mcp/tools/{name}/approve`: what was approved and what changed. */
export const mcpToolApprovalSchema = z.strictObject({
  tool: z.string(),
  approved: z.boolean().meta({ description: 'False when no definition was waiting: nothing changed.' }),
  sha256: z.string().optional().meta({ description: 'The approved hash now.' }),
  previousSha256: z.string().optional(),
  changes: definitionChangesSchema,
});
