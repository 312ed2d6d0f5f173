import { z } from 'zod';
import { builtinToolSchema } from './builtin/builtin.options';
import { codeToolSchema } from './code/code.options';
import { httpToolSchema } from './http/http.options';
import { mcpToolSchema } from './mcp/mcp.options';

/**
 * Every kind's entry schema: the one list the config's `tools` union is made of, static because
 * the config is read before any app (and its kinds, `toolKinds`) exists. A new kind adds its
 * schema here, in the order of the kinds list (tool-kinds.spec.ts checks that the two agree).
 */
export const TOOL_SCHEMAS = [httpToolSchema, builtinToolSchema, codeToolSchema, mcpToolSchema] as const;

/** One entry of `tools`: a tool of one of the kinds of {@link TOOL_SCHEMAS}. */
export const toolEntrySchema = z.discriminatedUnion('kind', TOOL_SCHEMAS, {
  error: `must be one of ${TOOL_SCHEMAS.map((schema) => schema.shape.kind.value).join(', ')}`,
});

/** One entry of `tools`, every default filled in. */
export type ToolConfig = z.output<typeof toolEntrySchema>;
