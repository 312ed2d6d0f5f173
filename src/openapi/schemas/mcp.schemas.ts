import { z } from 'zod';

/**
 * A JSON-RPC 2.0 message of the Model Context Protocol, or a batch of them; the MCP SDK checks
 * them against the protocol's own schemas, so only their envelope is shown here.
 */
export const mcpMessageSchema = z
  .union([z.looseObject({ jsonrpc: z.literal('2.0') }), z.array(z.looseObject({ jsonrpc: z.literal('2.0') }))])
  .meta({
    description:
      'A JSON-RPC 2.0 message of MCP (revision 2025-11-25 and the ones before it the SDK supports): `initialize` ' +
      '(without `Mcp-Session-Id`: opens a session), `tools/list`, `tools/call` (`_meta["io.bulkhead/idempotency-key"]` ' +
      'is its Idempotency-Key, `_meta.progressToken` asks for progress while it waits in its lane), `ping`, ' +
      '`notifications/cancelled`.',
  });

/** The JSON answer of a POST: the JSON-RPC response (a result, or an error with the envelope as `data`). */
export const mcpJsonAnswerSchema = z
  .union([z.looseObject({ jsonrpc: z.literal('2.0') }), z.array(z.looseObject({ jsonrpc: z.literal('2.0') }))])
  .meta({
    description:
      'A JSON-RPC response. A `tools/call` result has the tool result as text and the success body of ' +
      '`POST /v1/tools/{toolId}/invoke` as `structuredContent`, or `isError: true` with the error envelope as ' +
      "`structuredContent`; an unknown tool or a malformed request is a JSON-RPC error with the envelope's " +
      '`jsonrpcCode` and the envelope as `data`.',
  });

/** An event stream of JSON-RPC messages (`event: message`). */
export const mcpEventStreamSchema = z.string().meta({
  description:
    'Server-Sent Events, each `event: message` with one JSON-RPC message as `data`: on a POST, progress ' +
    'notifications then the response; on a GET, messages the server sends on its own.',
});

/** `DELETE /mcp`: the session is closed. */
export const mcpSessionClosedSchema = z.strictObject({ closed: z.literal(true) });
