import type { CallToolRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ResilienceError } from '../common';
import { JsonRpcRefusal } from './mcp-tool-results';

/**
 * `tools/call` as it is parsed before its handler runs. A request whose params the SDK's own
 * schema refuses would be answered -32603 (internal error) with zod's issues; here it is the
 * envelope's `invalid_request` (-32600) with a message of our own, and the envelope as `data`.
 */
export const callToolRequestSchema = z
  .object({ method: z.literal('tools/call'), params: z.unknown() })
  .check((context) => {
    const problem = problemOfCallParams(context.value.params);
    if (problem) throw new JsonRpcRefusal(new ResilienceError('invalid_request', problem));
  });

/** The params, once {@link callToolRequestSchema} passed them. */
export function callParamsOf(request: z.output<typeof callToolRequestSchema>): CallToolRequest['params'] {
  return request.params as CallToolRequest['params'];
}

/** What is wrong with a `tools/call`'s params for Bulkhead, or `undefined`. */
export function problemOfCallParams(params: unknown): string | undefined {
  if (!isObject(params)) return 'tools/call: params must be an object';
  if (typeof params.name !== 'string') return 'tools/call: params.name must be a string';
  if (params.arguments !== undefined && !isObject(params.arguments)) {
    return 'tools/call: params.arguments must be a JSON object';
  }
  if (params._meta !== undefined && !isObject(params._meta)) return 'tools/call: params._meta must be an object';
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
