import { z } from 'zod';
import { oneOf } from '../../../common';
import { toolCommon, toolDefaults } from '../tool-entry.options';

/** One of Bulkhead's own tools (`kind: builtin`): `echo` answers its arguments, `delay` waits. */
export const builtinToolSchema = z.strictObject({
  ...toolCommon,
  ...toolDefaults,
  kind: z.literal('builtin'),
  builtin: oneOf(['echo', 'delay']),
});

export type BuiltinToolConfig = z.output<typeof builtinToolSchema>;
