/**
 * The sides of the MCP benchmark: one tool call (`echo`, `{}`) made four ways against the built
 * service, for the same API-key tenant, and two ways to an upstream MCP server.
 *
 *   rest             POST /v1/tools/echo/invoke (the baseline)
 *   mcp-sse          POST /mcp, `tools/call` as raw JSON-RPC, answered as an event stream (the default)
 *   mcp-json         the same, on a service answering JSON (`mcp.responses: json`)
 *   sdk-client       the official MCP SDK client's `callTool` (StreamableHTTPClientTransport), on the
 *                    SSE service: what an agent runtime sees, its client's cost included
 *   upstream-direct  raw JSON-RPC `tools/call` of `echo` on the upstream MCP server itself
 *   via-bulkhead     raw JSON-RPC `tools/call` of `up.echo` on the SSE service's `/mcp`: the
 *                    `kind: mcp` tool that calls the same upstream's `echo` (pool, session, pipeline)
 *
 * The raw sides use one undici Pool of `workers` connections per side; each worker has a session
 * of its own (JSON-RPC ids are unique per session), opened before the runs.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Pool } from 'undici';
import type { Caller } from './closed-loop';

export type Side = 'rest' | 'mcp-sse' | 'mcp-json' | 'sdk-client' | 'upstream-direct' | 'via-bulkhead';
/** The sides compared with the REST route. */
export const SIDES: readonly Side[] = ['rest', 'mcp-sse', 'mcp-json', 'sdk-client'];
/** The sides of the upstream MCP server: directly, and through Bulkhead's `kind: mcp` tool. */
export const UPSTREAM_SIDES: readonly Side[] = ['upstream-direct', 'via-bulkhead'];

export const PROTOCOL_VERSION = '2025-06-18';
const ACCEPT = 'application/json, text/event-stream';

/** What the sides need to reach a service. */
export interface Endpoint {
  base: string;
  /** `authorization` (and content-type) of the API key. */
  headers: Record<string, string>;
}

/** Callers of one side, and what closes them. */
export interface SideCallers {
  callers: Caller[];
  close(): Promise<void>;
}

/** `workers` callers of the REST route. */
export function restCallers(endpoint: Endpoint, workers: number): SideCallers {
  const pool = new Pool(endpoint.base, { connections: workers });
  const body = JSON.stringify({ arguments: {} });
  const headers = { ...endpoint.headers, 'content-type': 'application/json' };
  const callOnce: Caller = async () => {
    const answer = await pool.request({ path: '/v1/tools/echo/invoke', method: 'POST', headers, body });
    const text = await answer.body.text();
    return answer.statusCode === 200 && text.includes('"result":{}');
  };
  return { callers: Array.from({ length: workers }, () => callOnce), close: () => pool.close() };
}

/** `workers` callers of `/mcp` speaking raw JSON-RPC, each on a session of its own, calling `tool`. */
export async function rawMcpCallers(endpoint: Endpoint, workers: number, tool = 'echo'): Promise<SideCallers> {
  const pool = new Pool(endpoint.base, { connections: workers });
  const headers = { ...endpoint.headers, 'content-type': 'application/json', accept: ACCEPT };
  const callers = await Promise.all(
    Array.from({ length: workers }, async () => {
      const session = await initialize(pool, headers);
      const onSession = { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': PROTOCOL_VERSION };
      let id = 1;
      const callOnce: Caller = async () => {
        const body = `{"jsonrpc":"2.0","id":${++id},"method":"tools/call","params":{"name":"${tool}","arguments":{}}}`;
        const answer = await pool.request({ path: '/mcp', method: 'POST', headers: onSession, body });
        const text = await answer.body.text();
        return answer.statusCode === 200 && text.includes('"structuredContent"') && !text.includes('"isError":true');
      };
      return callOnce;
    }),
  );
  return { callers, close: () => pool.close() };
}

/** `workers` official SDK clients, each with its session. */
export async function sdkCallers(endpoint: Endpoint, workers: number): Promise<SideCallers> {
  const clients = await Promise.all(
    Array.from({ length: workers }, async () => {
      const transport = new StreamableHTTPClientTransport(new URL(`${endpoint.base}/mcp`), {
        requestInit: { headers: { authorization: endpoint.headers.authorization! } },
      });
      const client = new Client({ name: 'bulkhead-bench', version: '1.0.0' });
      await client.connect(transport);
      return client;
    }),
  );
  const callers = clients.map((client): Caller => async () => {
    const result = await client.callTool({ name: 'echo', arguments: {} });
    return result.isError !== true && result.structuredContent !== undefined;
  });
  return { callers, close: async () => void (await Promise.all(clients.map((client) => client.close()))) };
}

/** Opens a session with a raw `initialize` and its `initialized` notification; its id. */
async function initialize(pool: Pool, headers: Record<string, string>): Promise<string> {
  const opened = await pool.request({
    path: '/mcp',
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
    }),
  });
  await opened.body.text();
  const session = opened.headers['mcp-session-id'];
  if (opened.statusCode !== 200 || typeof session !== 'string') {
    throw new Error(`initialize answered ${opened.statusCode} without a session`);
  }
  const onSession = { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': PROTOCOL_VERSION };
  const initialized = await pool.request({
    path: '/mcp',
    method: 'POST',
    headers: onSession,
    body: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  });
  await initialized.body.text();
  if (initialized.statusCode !== 202) throw new Error(`notifications/initialized answered ${initialized.statusCode}`);
  return session;
}
