import { z } from 'zod';
import { checkFaultPairs, faultSettings, intIn, oneOf } from '../../common';

const HOUR_MS = 3_600_000;

/**
 * What an LLM target's attempt can be made to suffer, each as the provider's own failure would
 * read: `overloaded` (503), `rate_limited` (429 with a Retry-After), `server_error` (500),
 * `timeout` (no answer until the attempt's timeout) and `stream_cut` (a streamed answer that
 * stops after its first content).
 */
export const LLM_FAULT_KINDS = ['overloaded', 'rate_limited', 'server_error', 'timeout', 'stream_cut'] as const;

/**
 * `llm.routes.<name>.targets[i].chaos`: inert unless `chaos.enabled` is true. Read by whatever
 * wraps the target's provider ({@link LlmProviderWrappers}, which ChaosModule provides).
 */
export const llmTargetChaosSchema = z
  .strictObject({
    ...faultSettings,
    faultKind: oneOf(LLM_FAULT_KINDS).optional(),
    /** `rate_limited` only: the Retry-After its 429 carries. @default 1000 */
    retryAfterMs: intIn(0, HOUR_MS).optional(),
  })
  .superRefine((value, context) => {
    checkFaultPairs(value, context);
    if (value.retryAfterMs !== undefined && value.faultKind !== 'rate_limited') {
      context.addIssue({
        code: 'custom',
        path: ['retryAfterMs'],
        message: 'only a rate_limited fault has a Retry-After',
      });
    }
  });

export type LlmTargetChaosConfig = z.output<typeof llmTargetChaosSchema>;
