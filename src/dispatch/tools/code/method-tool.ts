import { DEFAULT_PRIORITY } from '../../../bulkhead';
import { ResilienceError } from '../../../common';
import type { ToolArguments, ToolDefinition, ToolHandler, ToolInputSchema } from '../../tool';
import { compileInputCheck } from '../../tool-input-check';
import type { ToolMethod } from '../../tool-methods';
import { acceptAnyArguments } from '../any-arguments';
import type { ToolKindContext } from '../tool-kind';
import { DEFAULT_TOOL_TIMEOUT_MS } from '../tool-entry.options';
import type { CodeToolConfig } from './code.options';

/** A `@Tool` method as a tool; a config entry of kind `code` overrides what it sets. */
export function methodTool(
  { options, handler }: ToolMethod,
  ctx: ToolKindContext,
  config?: CodeToolConfig,
): ToolDefinition {
  const timeoutMs = config?.timeoutMs ?? options.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  const containment = config?.containment ?? options.containment ?? 'allow';
  return Object.freeze({
    id: options.id,
    kind: 'code' as const,
    lane: config?.lane ?? options.lane,
    description: config?.description ?? options.description,
    timeoutMs,
    idempotent: config?.idempotent ?? options.idempotent ?? false,
    containment,
    costUsd: config?.costUsd ?? options.costUsd ?? 0,
    tokens: config?.tokens ?? options.tokens ?? 0,
    audit: config?.audit ?? options.audit,
    priority: config?.priorityClass ?? options.priorityClass ?? DEFAULT_PRIORITY,
    validate: inputChecks(options.id, options.inputSchema, options.validate),
    inputSchema: options.inputSchema,
    handler: jsonResult(options.id, handler),
    ...ctx.resilience(options.id, timeoutMs, containment, config, options),
  });
}

/** A code tool's checks: its input schema's, then its own `validate`. */
function inputChecks(
  id: string,
  schema: ToolInputSchema | undefined,
  validate: ((args: ToolArguments) => void) | undefined,
): (args: ToolArguments) => void {
  if (!schema) return validate ?? acceptAnyArguments;
  const matchesSchema = compileInputCheck(id, schema);
  if (!validate) return matchesSchema;
  return (args) => {
    matchesSchema(args);
    validate(args);
  };
}

/**
 * A code tool's result goes to the client as JSON; one that cannot be (a BigInt, a cycle) fails
 * the attempt here, where the call is still accounted for, not later in the response writer.
 */
function jsonResult(id: string, handler: ToolHandler): ToolHandler {
  return async (args, context) => {
    const result = await handler(args, context);
    try {
      JSON.stringify(result);
    } catch {
      throw new ResilienceError('internal', `tool '${id}' answered a result that is not JSON`);
    }
    return result;
  };
}
