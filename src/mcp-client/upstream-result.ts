import { type CallToolResult, CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../common';

/**
 * What the SDK client is told a `tools/call` result must be: anything, so that it is checked
 * once, by {@link readToolResult}, and not twice.
 */
export const UNCHECKED_RESULT = z.unknown();

/** An upstream's `tools/call` result that is not one Bulkhead can hand on; the call's failure. */
export class UpstreamResultInvalid extends Error {
  constructor(readonly reason: string) {
    super(`the upstream's tools/call result ${reason}`);
    this.name = 'UpstreamResultInvalid';
  }
}

/**
 * The one place an upstream MCP server's `tools/call` result is checked before anything reads
 * it: its nesting bounded first (the answer built around it is serialised by recursive code,
 * which overflows the stack a few thousand levels down), then the specification's shape, the
 * SDK's own `CallToolResultSchema` (content blocks each of a known type, `isError` a boolean,
 * `structuredContent` an object; unknown keys of the result kept, as the SDK keeps them). What
 * comes back is a fresh value built by the schema; anything else throws
 * {@link UpstreamResultInvalid}, and nothing else: the call fails, `transient`.
 */
export function readToolResult(value: unknown): CallToolResult {
  if (jsonDepthExceeds(value, MAX_JSON_DEPTH))
    throw new UpstreamResultInvalid(`nests deeper than ${MAX_JSON_DEPTH} levels`);
  const parsed = CallToolResultSchema.safeParse(value);
  if (!parsed.success) throw new UpstreamResultInvalid('is not one MCP allows');
  return parsed.data;
}
