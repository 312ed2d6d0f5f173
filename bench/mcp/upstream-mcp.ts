/**
 * An upstream MCP server for the MCP benchmark, in a process of its own on loopback, so its CPU
 * is not Bulkhead's or the callers': the official SDK's McpServer on its Streamable HTTP
 * transport (event-stream answers, its default), one server and transport per session. One
 * tool, `echo`, answering `{}` as structuredContent and text. `GET /stats` answers the number
 * of `tools/call` requests and sessions so far and the process's CPU time; anything on `/mcp`
 * goes to the SDK.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { call } from '../support/service';
import { type Child, stopChild } from '../support/processes';
import { answerStats, listenOnLoopback, startServerProcess } from '../support/server-process';

const READY = 'UPSTREAM_MCP_PORT';

export interface UpstreamMcpStats {
  /** `tools/call` requests received so far. */
  calls: number;
  sessions: number;
  /** The process's CPU time (user + system) so far, in µs. */
  cpuUs: number;
}

export interface UpstreamMcp {
  /** `http://127.0.0.1:<port>` */
  readonly base: string;
  /** `http://127.0.0.1:<port>/mcp` */
  readonly url: string;
  readonly child: Child;
  stats(): Promise<UpstreamMcpStats>;
  stop(): Promise<void>;
}

/** Starts the upstream process and waits until it listens. */
export async function startUpstreamMcp(name = 'upstream-mcp'): Promise<UpstreamMcp> {
  const { child, base } = await startServerProcess(name, __filename, READY);
  return {
    base,
    url: `${base}/mcp`,
    child,
    stats: async () => JSON.parse((await call(`${base}/stats`)).text) as UpstreamMcpStats,
    stop: () => stopChild(child),
  };
}

function serve(): void {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let calls = 0;

  async function open(): Promise<StreamableHTTPServerTransport> {
    const server = new McpServer({ name: 'bench-upstream', version: '1.0.0' });
    server.registerTool('echo', { description: 'answers {}' }, () => ({
      content: [{ type: 'text', text: '{}' }],
      structuredContent: {},
    }));
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
      },
    });
    await server.connect(transport);
    return transport;
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (request.url === '/stats') return answerStats(response, { calls, sessions: sessions.size });
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body =
      chunks.length > 0 ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { method?: string }) : undefined;
    if (body?.method === 'tools/call') calls++;
    const id = request.headers['mcp-session-id'];
    const transport =
      typeof id === 'string' ? sessions.get(id) : body?.method === 'initialize' ? await open() : undefined;
    if (!transport) {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"unknown session"}');
      return;
    }
    await transport.handleRequest(request, response, body);
  }

  const server = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  listenOnLoopback(server, READY);
}

if (require.main === module) serve();
