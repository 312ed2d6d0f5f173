import { z } from 'zod';

const count = z.int().min(0);

/** One lane: what runs and waits now, its limits, and the most calls ever seen running at once. */
export const laneSnapshotSchema = z.strictObject({
  active: count,
  waiting: count,
  waitingByClass: z
    .strictObject({ critical: count, standard: count, sheddable: count })
    .meta({ description: '`waiting` by priority class: a higher class starts first.' }),
  concurrency: count,
  queueCapacity: count,
  peakActive: count.meta({ description: 'The most calls ever seen running at once: the proof of isolation.' }),
  limit: count
    .optional()
    .meta({ description: "An adaptive lane's: calls that may run at once now (a fixed lane's is `concurrency`)." }),
  queueLimit: count
    .optional()
    .meta({ description: "An adaptive lane's: calls that may wait now (a fixed lane's is `queueCapacity`)." }),
  adaptive: z
    .strictObject({ algorithm: z.enum(['gradient2', 'vegas', 'aimd']), min: count, max: count })
    .optional()
    .meta({ description: "An adaptive lane's algorithm and the bounds of its limit." }),
});

/** `GET /v1/lanes`. */
export const lanesAnswerSchema = z.strictObject({ lanes: z.record(z.string(), laneSnapshotSchema) });

/** One breaker; the counts are those of its rolling window. */
export const circuitSnapshotSchema = z.strictObject({
  state: z.enum(['closed', 'open', 'half_open']),
  failures: count,
  successes: count,
  tenantsOpen: z.array(z.strictObject({ tenant: z.string(), retryAfterMs: z.number().min(0) })).meta({
    description:
      'Tenants the breaker refuses on their own, with the time left until each may probe: to a tenant, itself ' +
      'alone when it is refused; every such tenant in `GET /v1/admin/circuits`.',
  }),
  slowCalls: count
    .optional()
    .meta({ description: 'Attempts of the window slower than slowCallDurationMs; only when that is set.' }),
  openTimeMs: z.number().min(0).optional().meta({
    description:
      'How long it stays open when it opens next (or now): grown by failed probes; only with backoffMultiplier above 1.',
  }),
});

/** `GET /v1/circuits` and `GET /v1/admin/circuits`. */
export const circuitsAnswerSchema = z.strictObject({ circuits: z.record(z.string(), circuitSnapshotSchema) });

/** One line of the event ledger: fixed fields only, never arguments, results or secrets. */
export const ledgerEventSchema = z.strictObject({
  at: z.string().meta({ description: 'ISO time.' }),
  callId: z.string(),
  toolId: z.string(),
  lane: z.string(),
  tenant: z.string(),
  status: z.string().meta({
    description:
      '`ok`, an error kind, `cancelled`, `finished_after_caller_cancel`, `error`, or a breaker or admin transition.',
  }),
  chaos: z
    .array(z.string())
    .optional()
    .meta({ description: 'Only on a call chaos touched: what it injected into its attempts, in order.' }),
});

/** `GET /v1/events` (the caller's tenant's calls and the transitions it may see) and `GET /v1/admin/events` (all). */
export const eventsAnswerSchema = z.strictObject({ events: z.array(ledgerEventSchema) });
