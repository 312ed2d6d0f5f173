import { z } from 'zod';
import { bool, name } from '../../../common';
import { containmentRule, timeoutMs, toolCommon } from '../tool-entry.options';

/** A `@Tool` method's entry (`kind: code`): it overrides only what it sets; the rest comes from the decorator. */
export const codeToolSchema = z.strictObject({
  ...toolCommon,
  kind: z.literal('code'),
  lane: name().optional(),
  timeoutMs: timeoutMs().optional(),
  idempotent: bool().optional(),
  containment: containmentRule().optional(),
});

export type CodeToolConfig = z.output<typeof codeToolSchema>;
