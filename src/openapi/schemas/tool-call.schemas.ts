import { z } from 'zod';
import { ALL_ERROR_KINDS, errorEnvelopeSchema } from './error-envelope.schema';

/** The success body of a tool call, exactly these fields (docs/http-contract.md section 4). */
export const toolCallSuccessSchema = z.strictObject({
  callId: z.string(),
  toolId: z.string(),
  lane: z.string(),
  pool: z.enum(['normal', 'isolated']).meta({
    description:
      'The outbound HTTP pool the call was routed to; for a replayed outcome, that of the call that made it.',
  }),
  result: z.unknown().meta({ description: 'What the tool answered; `null` when it answered nothing.' }),
  attempts: z.int().min(0).meta({ description: 'Attempts that ran, retries included.' }),
  durationMs: z.number().min(0).meta({ description: "Measured on the service's clock." }),
  replayed: z.boolean().meta({
    description: "The outcome is another call's, joined or replayed by `Idempotency-Key`.",
  }),
});

/** Every error envelope, of any kind. */
export const errorEnvelopeOfAnyKind = errorEnvelopeSchema(ALL_ERROR_KINDS);

/** `POST /v1/tools/batch`: one result per call, in call order, each a success body or its own envelope. */
export const batchResponseSchema = z.strictObject({
  results: z.array(z.union([toolCallSuccessSchema, errorEnvelopeOfAnyKind])),
});
