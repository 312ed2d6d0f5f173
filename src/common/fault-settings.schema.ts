import type { z } from 'zod';
import { intIn, numberIn } from './schema-helpers';

/**
 * The fault settings a tool and an LLM target share (their `chaos`); rates are shares of
 * attempts, from 0 to 1. Each feature adds its own `faultKind` (src/dispatch, src/llm).
 */
export const faultSettings = {
  /** The share of attempts that fail with `faultKind` instead of running. */
  faultRate: numberIn(0, 1).optional(),
  /** The share of attempts that wait `latencyMs` before they run (or fail). */
  latencyRate: numberIn(0, 1).optional(),
  /** Added before the attempt, on its clock: it counts towards the attempt's timeout. */
  latencyMs: intIn(1, 600_000).optional(),
};

interface FaultSettings {
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
export function checkFaultPairs(value: FaultSettings, context: z.RefinementCtx): void {
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
