import { z } from 'zod';
import type { ParameterDoc } from '../headers';
import type { RouteDoc } from '../route-doc';
import { mcpEventStreamSchema, mcpJsonAnswerSchema, mcpSessionClosedSchema } from '../schemas/mcp.schemas';

const SESSION_ID: ParameterDoc = {
  name: 'Mcp-Session-Id',
  in: 'header',
  description:
    'The session, from the answer to `initialize`; bound to the tenant that opened it (another API key: 404). ' +
    'An unknown, closed or expired session is `404 not_found`: initialize a new one.',
  schema: z.string(),
};

const PROTOCOL_VERSION: ParameterDoc = {
  name: 'MCP-Protocol-Version',
  in: 'header',
  description: 'The protocol revision negotiated at `initialize`; an unsupported one is `400 invalid_request`.',
  schema: z.string(),
};

const SESSION_ANSWER_HEADER = {
  'mcp-session-id': { description: 'The session (set on every answer of a session).', schema: z.string() },
};

/** `/mcp`: the tools over the Model Context Protocol (Streamable HTTP). */
export const MCP_ROUTES: RouteDoc[] = [
  {
    group: 'mcp',
    method: 'post',
    path: '/mcp',
    operationId: 'mcpMessage',
    tag: 'mcp',
    summary: 'MCP: send JSON-RPC messages (initialize, tools/list, tools/call, notifications)',
    description:
      '`Accept` must list `application/json` and `text/event-stream` (406 otherwise). A request is answered with ' +
      'an event stream (`mcp.responses: sse`, the default: progress, then the response) or one JSON body ' +
      '(`json`); only notifications, or a request that was cancelled, are answered `202` without a body. ' +
      'Every `tools/call` runs through the same pipeline as `POST /v1/tools/{toolId}/invoke`.',
    auth: 'apiKey',
    parameters: [SESSION_ID, PROTOCOL_VERSION],
    body: { schema: 'McpMessage', required: true },
    answer: {
      description: 'The JSON-RPC response, as JSON or as an event stream.',
      content: { 'application/json': mcpJsonAnswerSchema, 'text/event-stream': mcpEventStreamSchema },
      headers: SESSION_ANSWER_HEADER,
    },
    errors: [400, 401, 403, 404, 413, 500, 503],
  },
  {
    group: 'mcp',
    method: 'get',
    path: '/mcp',
    operationId: 'mcpListen',
    tag: 'mcp',
    summary: "MCP: open the session's event stream for messages the server sends on its own",
    description: '`Accept` must list `text/event-stream`. One stream per session (409 for a second).',
    auth: 'apiKey',
    parameters: [SESSION_ID, PROTOCOL_VERSION],
    answer: {
      description: 'An event stream, open until the session ends.',
      content: { 'text/event-stream': mcpEventStreamSchema },
      headers: SESSION_ANSWER_HEADER,
    },
    errors: [400, 401, 403, 404, 500],
  },
  {
    group: 'mcp',
    method: 'delete',
    path: '/mcp',
    operationId: 'mcpEndSession',
    tag: 'mcp',
    summary: 'MCP: end a session (its streams close, its calls are cancelled)',
    auth: 'apiKey',
    parameters: [SESSION_ID],
    answer: { description: 'The session is closed.', content: { 'application/json': mcpSessionClosedSchema } },
    errors: [400, 401, 403, 404, 500],
  },
];
