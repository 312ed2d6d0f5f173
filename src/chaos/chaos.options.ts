import { z } from 'zod';
import { bool, intIn, numberIn, oneOf } from '../common';

const HOUR_MS = 3_600_000;

/**
 * What a tool's attempt can be made to suffer: `transient` (its upstream answered 503) and
 * `timeout` (it hangs until the attempt's timeout). The first is always retried, the second
 * only for an idempotent tool; the breaker counts both.
 */
export const TOOL_FAULT_KINDS = ['transient', 'timeout'] as const;

/**
 * What an LLM target's attempt can be made to suffer, each as the provider's own failure would
 * read: `overloaded` (503), `rate_limited` (429 with a Retry-After), `server_error` (500),
 * `timeout` (no answer until the attempt's timeout) and `stream_cut` (a streamed answer that
 * stops after its first content).
 */
export const LLM_FAULT_KINDS = ['overloaded', 'rate_limited', 'server_error', 'timeout', 'stream_cut'] as const;

/** The settings a tool and an LLM target share; rates are shares of attempts, from 0 to 1. */
const shared = {
  /** The share of attempts that fail with `faultKind` instead of running. */
  faultRate: numberIn(0, 1).optional(),
  /** The share of attempts that wait `latencyMs` before they run (or fail). */
  latencyRate: numberIn(0, 1).optional(),
  /** Added before the attempt, on its clock: it counts towards the attempt's timeout. */
  latencyMs: intIn(1, 600_000).optional(),
};

interface SharedSettings {
  faultRate?: number;
  faultKind?: string;
  latencyRate?: number;
  latencyMs?: number;
}

/**
 * A rate and what it applies to go together: a fault rate without a kind, or a latency without
 * its rate, would be a rehearsal that silently does not happen. A rate of 0 is allowed alone
 * (it pauses the setting).
 */
function checkPairs(value: SharedSettings, context: z.RefinementCtx): void {
  if (value.faultKind === undefined && (value.faultRate ?? 0) > 0) {
    context.addIssue({ code: 'custom', path: ['faultKind'], message: 'is required when faultRate is above 0' });
  }
  if (value.faultKind !== undefined && value.faultRate === undefined) {
    context.addIssue({
      code: 'custom',
      path: ['faultRate'],
      message: 'is required with faultKind: the share of attempts that fail, from 0 to 1',
    });
  }
  if (value.latencyMs !== undefined && value.latencyRate === undefined) {
    context.addIssue({
      code: 'custom',
      path: ['latencyRate'],
      message: 'is required with latencyMs: the share of attempts delayed, from 0 to 1',
    });
  }
  if (value.latencyMs === undefined && (value.latencyRate ?? 0) > 0) {
    context.addIssue({ code: 'custom', path: ['latencyMs'], message: 'is required when latencyRate is above 0' });
  }
}

/** `tools.<id>.chaos`: inert unless `chaos.enabled` is true. */
export const toolChaosSchema = z
  .strictObject({ ...shared, faultKind: oneOf(TOOL_FAULT_KINDS).optional() })
  .superRefine(checkPairs);

/** `llm.routes.<name>.targets[i].chaos`: inert unless `chaos.enabled` is true. */
export const llmTargetChaosSchema = z
  .strictObject({
    ...shared,
    faultKind: oneOf(LLM_FAULT_KINDS).optional(),
    /** `rate_limited` only: the Retry-After its 429 carries. @default 1000 */
    retryAfterMs: intIn(0, HOUR_MS).optional(),
  })
  .superRefine((value, context) => {
    checkPairs(value, context);
    if (value.retryAfterMs !== undefined && value.faultKind !== 'rate_limited') {
      context.addIssue({
        code: 'custom',
        path: ['retryAfterMs'],
        message: 'only a rate_limited fault has a Retry-After',
      });
    }
  });

/**
 * The switch of every chaos setting. Off unless set; `true` is refused unless the environment
 * variable BULKHEAD_ALLOW_CHAOS is `true` (cross-references.ts), so a staging file copied to
 * production cannot inject failures there.
 */
export const chaosSchema = z.strictObject({ enabled: bool().default(false) }).prefault({});

export type ToolChaosConfig = z.output<typeof toolChaosSchema>;
export type LlmTargetChaosConfig = z.output<typeof llmTargetChaosSchema>;
export type ChaosConfig = z.output<typeof chaosSchema>;
