import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export interface McpConnection {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** The session the server gave this client. */
  sessionId: string;
}

/**
 * The official MCP SDK client, connected to the app's `/mcp` with these headers (an API key's
 * `Authorization`, or none): what an agent runtime does.
 */
export async function connectMcp(base: string, headers: Record<string, string> = {}): Promise<McpConnection> {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } });
  const client = new Client({ name: 'bulkhead-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, sessionId: transport.sessionId! };
}

/** Closes clients a test opened, leaving the session to the server (no DELETE). */
export async function closeAll(connections: McpConnection[]): Promise<void> {
  await Promise.all(connections.map((connection) => connection.client.close().catch(() => undefined)));
  connections.length = 0;
}
