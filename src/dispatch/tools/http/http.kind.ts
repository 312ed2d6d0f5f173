import type { ToolHandler, ToolInputSchema } from '../../tool';
import { compileInputCheck } from '../../tool-input-check';
import { acceptAnyArguments } from '../any-arguments';
import { configToolBasics } from '../config-tool';
import type { ToolKind } from '../tool-kind';
import { type HttpToolConfig, httpToolSchema } from './http.options';
import { httpTool } from './http.tool';

/** `kind: http`: POSTs its arguments as JSON to a fixed URL ({@link httpTool}). */
export const httpToolKind: ToolKind<HttpToolConfig> = {
  kind: 'http',
  schema: httpToolSchema,
  build(id, config, ctx) {
    const basics = configToolBasics(id, config, ctx);
    const schema = config.inputSchema as ToolInputSchema | undefined;
    return Object.freeze({
      ...basics,
      validate: schema ? compileInputCheck(id, schema) : acceptAnyArguments,
      inputSchema: schema,
      handler: httpTool(id, config, ctx.clock) as ToolHandler,
    });
  },
};
