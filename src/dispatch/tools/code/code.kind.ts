import type { ToolKind } from '../tool-kind';
import { type CodeToolConfig, codeToolSchema } from './code.options';
import { methodTool } from './method-tool';

/**
 * `kind: code`: the entry of a `@Tool` method, overriding what the decorator sets (its lane, its
 * timeout, its retries...). A `@Tool` method the config does not name is a code tool all the same
 * (the registry builds it with {@link methodTool}).
 */
export const codeToolKind: ToolKind<CodeToolConfig> = {
  kind: 'code',
  schema: codeToolSchema,
  overridesToolMethod: true,
  build(id, config, ctx) {
    const method = ctx.toolMethod(id);
    if (!method) throw new Error(`tool '${id}' is of kind code, but no provider has a @Tool('${id}') method`);
    return methodTool(method, ctx, config);
  },
};
