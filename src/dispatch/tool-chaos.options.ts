import { z } from 'zod';
import { checkFaultPairs, faultSettings, oneOf } from '../common';

/**
 * What a tool's attempt can be made to suffer: `transient` (its upstream answered 503) and
 * `timeout` (it hangs until the attempt's timeout). The first is always retried, the second
 * only for an idempotent tool; the breaker counts both.
 */
export const TOOL_FAULT_KINDS = ['transient', 'timeout'] as const;

/**
 * `tools.<id>.chaos`: inert unless `chaos.enabled` is true. Read by whatever wraps the tool's
 * attempts ({@link ToolAttemptWrappers}, which ChaosModule provides).
 */
export const toolChaosSchema = z
  .strictObject({ ...faultSettings, faultKind: oneOf(TOOL_FAULT_KINDS).optional() })
  .superRefine(checkFaultPairs);

export type ToolChaosConfig = z.output<typeof toolChaosSchema>;
