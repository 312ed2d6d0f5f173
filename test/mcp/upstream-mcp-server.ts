import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { type Deferred, deferred } from '../support/deferred';

/** One HTTP request the upstream received, with what its JSON-RPC message was. */
export interface McpRequestSeen {
  method: string;
  /** The JSON-RPC method of a POSTed message (`initialize`, `tools/call`, `notifications/cancelled`...). */
  rpc: string | undefined;
  /** The JSON-RPC id of a request. */
  id: number | string | undefined;
  /** The tool of a `tools/call`. */
  tool: string | undefined;
  sessionId: string | undefined;
  headers: IncomingMessage['headers'];
  /** The params of the message, as sent. */
  params: Record<string, any> | undefined;
  /** Which socket of the caller's pool it came on. */
  remotePort: number;
}

/** Answers some requests itself instead of the MCP transport; true when it did. */
export type Interceptor = (seen: McpRequestSeen, response: ServerResponse) => boolean;

/** The input schema `add` lists (the SDK adds the draft-07 `$schema`). */
export const ADD_SCHEMA = {
  type: 'object',
  properties: { a: { type: 'number' }, b: { type: 'number' } },
  required: ['a', 'b'],
};

/** What a started server serves besides its usual tools. */
export interface UpstreamMcpServerOptions {
  /**
   * Also `remember` ({text}: kept in the MCP session it arrives in) and `recall` (what this
   * session was told, as structuredContent `{ remembered: [...] }`): the state of one session, as
   * a browser or memory server keeps it.
   */
  memory?: boolean;
}

/**
 * A real MCP server on loopback (the official SDK's McpServer on its Streamable HTTP transport,
 * one per session) for a `kind: mcp` tool to call. Tools: `add` ({a, b} → structuredContent
 * `{sum}`), `echo` ({text} → the text as content), `fail` (throws: an `isError` result),
 * `slow` (held until the test releases its gate; records whether its request was cancelled).
 * It records every request, the sessions it opened, and answers through `intercept` when told.
 * With `memory`, also `remember` and `recall` (see {@link UpstreamMcpServerOptions}).
 */
export class UpstreamMcpServer {
  readonly seen: McpRequestSeen[] = [];
  /** Session ids in the order they were opened. */
  readonly sessionsOpened: string[] = [];
  /** `slow` calls waiting for the test; each resolves one. */
  readonly gates: Array<Deferred<void>> = [];
  /** `slow` calls whose request signal fired (the SDK got `notifications/cancelled`). */
  cancelled = 0;
  /** HTTP requests whose connection closed before their answer ended. */
  abandoned = 0;
  intercept: Interceptor | undefined;
  private readonly sessions = new Map<string, Session>();
  private readonly sockets = new Set<Socket>();
  private readonly extraTools: string[] = [];
  private echoChanged = false;

  private constructor(
    private readonly server: Server,
    private readonly options: UpstreamMcpServerOptions = {},
  ) {}

  /** Listens on 127.0.0.1 (`port`, or one the system picks). */
  static async start(port = 0, options: UpstreamMcpServerOptions = {}): Promise<UpstreamMcpServer> {
    const server = createServer();
    const upstream = new UpstreamMcpServer(server, options);
    server.on('connection', (socket) => {
      upstream.sockets.add(socket);
      socket.on('close', () => upstream.sockets.delete(socket));
    });
    server.on('request', (request, response) => void upstream.serve(request, response));
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return upstream;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  /** The `tools/call` requests received, in order. */
  get calls(): McpRequestSeen[] {
    return this.seen.filter((request) => request.rpc === 'tools/call');
  }

  /** The session ids a client ended with its DELETE, in order. */
  get sessionsEnded(): Array<string | undefined> {
    return this.seen.filter((request) => request.method === 'DELETE').map((request) => request.sessionId);
  }

  /** Forgets every session, as a restarted server does: their ids answer 404 from now on. */
  forgetSessions(): void {
    for (const { transport } of this.sessions.values()) void transport.close();
    this.sessions.clear();
  }

  /** Adds a tool to every session (and those to come): the SDK sends `notifications/tools/list_changed`. */
  addTool(name: string): void {
    this.extraTools.push(name);
    for (const { server } of this.sessions.values()) registerExtra(server, name);
  }

  /**
   * `echo` says it takes at most 3 characters now, in every session (and those to come): the
   * SDK sends `notifications/tools/list_changed` on each session's listening stream.
   */
  changeEcho(): void {
    this.echoChanged = true;
    for (const { echo } of this.sessions.values()) changeEcho(echo);
  }

  async close(): Promise<void> {
    for (const gate of this.gates) gate.resolve();
    for (const socket of this.sockets) socket.destroy();
    this.forgetSessions();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const message = text ? (JSON.parse(text) as Record<string, any>) : undefined;
    const sessionId = request.headers['mcp-session-id'] as string | undefined;
    const seen: McpRequestSeen = {
      method: request.method ?? '',
      rpc: message?.method,
      id: message?.id,
      tool: message?.method === 'tools/call' ? message.params?.name : undefined,
      sessionId,
      headers: request.headers,
      params: message?.params,
      remotePort: request.socket.remotePort ?? 0,
    };
    this.seen.push(seen);
    response.on('close', () => {
      if (!response.writableEnded) this.abandoned++;
    });
    if (this.intercept?.(seen, response)) return;
    let session = sessionId ? this.sessions.get(sessionId) : undefined;
    if (!session) {
      if (sessionId || message?.method !== 'initialize') {
        response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"unknown session"}');
        return;
      }
      session = this.open();
      await session.server.connect(session.transport);
    }
    await session.transport.handleRequest(request, response, message);
  }

  private open(): Session {
    const server = new McpServer({ name: 'upstream-under-test', version: '1.0.0' });
    const echo = server.registerTool(
      'echo',
      { description: 'says the text back', inputSchema: { text: z.string() } },
      ({ text }) => ({ content: [{ type: 'text', text }] }),
    );
    if (this.echoChanged) changeEcho(echo);
    const opened: Session = {
      server,
      echo,
      transport: new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          this.sessions.set(id, opened);
          this.sessionsOpened.push(id);
        },
      }),
    };
    server.registerTool(
      'add',
      { description: 'adds two numbers', inputSchema: { a: z.number(), b: z.number() } },
      ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } }),
    );
    server.registerTool('fail', { description: 'always fails' }, () => {
      throw new Error('the upstream tool broke: disk full');
    });
    server.registerTool('slow', { description: 'waits for the test' }, async (extra) => {
      const gate = deferred<void>();
      this.gates.push(gate);
      extra.signal.addEventListener('abort', () => this.cancelled++, { once: true });
      await gate.promise;
      return { content: [{ type: 'text' as const, text: 'slow done' }] };
    });
    server.registerTool('steps', { description: 'reports three steps of progress, then answers' }, async (extra) => {
      const progressToken = extra._meta?.progressToken;
      for (let step = 1; progressToken !== undefined && step <= 3; step++) {
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress: step, total: 3, message: `step ${step} of 3` },
        });
      }
      return { content: [{ type: 'text' as const, text: 'steps done' }] };
    });
    if (this.options.memory) registerMemory(server);
    for (const name of this.extraTools) registerExtra(server, name);
    return opened;
  }
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  echo: RegisteredTool;
}

function changeEcho(echo: RegisteredTool): void {
  echo.update({ description: 'says the text back, shorter', paramsSchema: { text: z.string().max(3) } });
}

function registerExtra(server: McpServer, name: string): void {
  server.registerTool(name, { description: `added later: ${name}`, inputSchema: { n: z.number().int() } }, () => ({
    content: [{ type: 'text', text: name }],
  }));
}

/** `remember` and `recall`: what this session was told, and nothing of any other session's. */
function registerMemory(server: McpServer): void {
  const remembered: string[] = [];
  server.registerTool(
    'remember',
    { description: 'keeps a text in this session', inputSchema: { text: z.string() } },
    ({ text }) => {
      remembered.push(text);
      return { content: [{ type: 'text', text: `remembered ${remembered.length}` }] };
    },
  );
  server.registerTool('recall', { description: 'what this session was told' }, () => ({
    content: [{ type: 'text', text: remembered.join(',') }],
    structuredContent: { remembered: [...remembered] },
  }));
}
