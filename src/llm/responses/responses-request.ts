import { parseBodyFields, ResilienceError } from '../../common';
import { type ResponsesRequest, responsesRequestSchema } from '../wire';

/**
 * What needs state Bulkhead does not keep, each with what to send instead. Kept responses
 * (`previous_response_id`, `item_reference`) are resolved after parsing (stored/).
 */
const STATEFUL_FIELDS: Record<string, string> = {
  conversation: 'Bulkhead keeps no conversations: send the whole conversation in input',
  prompt: 'Bulkhead keeps no prompt templates: send the instructions and input themselves',
  background: 'Bulkhead keeps no responses to poll: send the request without background',
};

/** The request as the route reads it, or `invalid_request` naming the first field that is wrong. */
export function parseResponsesRequest(body: unknown): ResponsesRequest {
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    const fields = body as Record<string, unknown>;
    for (const [field, instead] of Object.entries(STATEFUL_FIELDS)) {
      if (fields[field] !== undefined && fields[field] !== null && fields[field] !== false) {
        throw new ResilienceError('invalid_request', `${field}: ${instead}`);
      }
    }
    refuseBuiltInTools(fields.tools);
  }
  return parseBodyFields(responsesRequestSchema, body);
}

function refuseBuiltInTools(tools: unknown): void {
  if (!Array.isArray(tools)) return;
  for (const entry of tools as unknown[]) {
    const type = (entry as { type?: unknown } | null)?.type;
    if (type !== 'function' && typeof type === 'string') {
      throw new ResilienceError(
        'invalid_request',
        `tools: the built-in tool ${JSON.stringify(type.slice(0, 64))} is not supported through Bulkhead; ` +
          'send function tools, and run the search or the code yourself',
      );
    }
  }
}
