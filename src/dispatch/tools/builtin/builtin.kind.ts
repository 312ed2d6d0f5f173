import type { ToolHandler } from '../../tool';
import { acceptAnyArguments } from '../any-arguments';
import { configToolBasics } from '../config-tool';
import type { ToolKind } from '../tool-kind';
import { type BuiltinToolConfig, builtinToolSchema } from './builtin.options';
import { DELAY_INPUT_SCHEMA, delay, validateDelay } from './delay.tool';
import { echo } from './echo.tool';

/** `kind: builtin`: Bulkhead's own tools, `echo` (answers its arguments) and `delay` (waits `{ ms }`). */
export const builtinToolKind: ToolKind<BuiltinToolConfig> = {
  kind: 'builtin',
  schema: builtinToolSchema,
  build(id, config, ctx) {
    const basics = configToolBasics(id, config, ctx);
    const delays = config.builtin === 'delay';
    return Object.freeze({
      ...basics,
      validate: delays ? validateDelay : acceptAnyArguments,
      inputSchema: delays ? DELAY_INPUT_SCHEMA : undefined,
      handler: (delays ? delay(ctx.clock) : echo) as ToolHandler,
    });
  },
};
