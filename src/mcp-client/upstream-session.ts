import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  type CallToolResult,
  ListToolsResultSchema,
  type Tool,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { type Clock, noop, raceWithAbort, ResilienceError } from '../common';
import type { HttpPool, PoolName } from '../containment';
import { SERVER_INFO } from './server-info';
import { CallRoutingTransport } from './call-routing.transport';
import type { UpstreamCall } from './upstream-call';
import { poolFetch } from './pool-fetch';
import { readToolResult, UNCHECKED_RESULT } from './upstream-result';

/** The `_meta` key an idempotency key travels under: the one Bulkhead's own `/mcp` reads. */
export const UPSTREAM_IDEMPOTENCY_META = 'io.bulkhead/idempotency-key';

/**
 * The SDK's own request timer must never decide (the attempt's timeout, on the injected clock,
 * does): the longest a timer can be set for.
 */
const NEVER_MS = 2_147_483_647;
/** How long a closing session waits for the upstream to take its DELETE. */
const GOODBYE_MS = 1_000;
/**
 * The most one answer of the session's own requests (initialize, a page of `tools/list`) may
 * take: a server with many tools and long schemas lists more than a call answers.
 */
const SESSION_ANSWER_LIMIT = 16 * 1024 * 1024;
/** Pages of `tools/list` read at most: a server that keeps handing out cursors is not followed for ever. */
const MAX_LIST_PAGES = 100;

/** An upstream MCP server as a session reaches it. */
export interface UpstreamEndpoint {
  /** Its Streamable HTTP endpoint. */
  readonly url: string;
  /** Sent on every request (the config's, `${ENV}` substituted); never logged. */
  readonly headers: Readonly<Record<string, string>>;
  /** The longest the session's own requests (initialize, tools/list) may wait. */
  readonly timeoutMs: number;
}

/** One SDK client on its transport, and the calls it carries now. */
class Connection {
  inFlight = 0;
  private retired = false;

  constructor(
    readonly client: Client,
    readonly transport: CallRoutingTransport,
  ) {}

  /** Whether the upstream gave it a session (stateless servers give none). */
  get hasSession(): boolean {
    return this.transport.sessionId !== undefined;
  }

  /** No new call takes it; it closes once its calls are over (they end as the upstream answers them). */
  retire(): void {
    if (this.retired) return;
    this.retired = true;
    if (this.inFlight === 0) void this.client.close();
  }

  settled(): void {
    this.inFlight--;
    if (this.retired && this.inFlight === 0) void this.client.close();
  }

  /** Ends the upstream's session (DELETE, waited for at most `GOODBYE_MS`), then the client. */
  async end(clock: Clock): Promise<void> {
    let timer: unknown;
    const waited = new Promise<void>((resolve) => {
      timer = clock.setTimer(resolve, GOODBYE_MS, { unref: true });
    });
    await Promise.race([this.transport.terminateSession().catch(noop), waited]);
    clock.clearTimer(timer);
    await this.client.close();
  }
}

/**
 * Bulkhead's MCP session with one upstream server through one pool (the SDK's Client on its
 * Streamable HTTP transport, whose every request goes through the pool): opened on first use,
 * opened again when the upstream says it is gone (404), ended at shutdown. A session is never
 * shared between pools, so a contained tenant's calls never ride a normal tenant's session.
 */
export class UpstreamSession {
  private connection: Promise<Connection> | undefined;
  /** What `connection` resolved to. */
  private current: Connection | undefined;
  private readonly open = new Set<Connection>();
  private closed = false;

  constructor(
    private readonly endpoint: UpstreamEndpoint,
    private readonly httpPool: HttpPool,
    private readonly clock: Clock,
    /** Told when the server says its tools changed; only given to the one session that listens. */
    private readonly onToolsChanged?: () => void,
  ) {}

  get pool(): PoolName {
    return this.httpPool.name;
  }

  /**
   * One `tools/call` through the call's pool and attempt: `notifications/cancelled` and the
   * request's HTTP exchange aborted when the attempt is. A session the upstream no longer knows
   * (404) is opened again and the call sent once more: the upstream never ran it.
   */
  async callTool(name: string, args: Record<string, unknown>, call: UpstreamCall): Promise<CallToolResult> {
    const params = {
      name,
      arguments: args,
      ...(call.idempotencyKey === undefined ? {} : { _meta: { [UPSTREAM_IDEMPOTENCY_META]: call.idempotencyKey } }),
    };
    for (let sent = 1; ; sent++) {
      const connection = await raceWithAbort(this.connected(), call.signal);
      connection.inFlight++;
      try {
        const result = await connection.transport.sendFor(call, () =>
          connection.client.request({ method: 'tools/call', params }, UNCHECKED_RESULT, {
            signal: call.signal,
            timeout: NEVER_MS,
            // The SDK checks the notification's shape (numbers, a string) before it calls this.
            onprogress: call.onProgress,
          }),
        );
        return readToolResult(result);
      } catch (error) {
        if (sent > 1 || call.signal.aborted || !isSessionGone(error, connection)) throw error;
        this.forget(connection);
      } finally {
        connection.settled();
      }
    }
  }

  /** Every tool the server lists (all pages), through this session. */
  async listTools(): Promise<Tool[]> {
    for (let sent = 1; ; sent++) {
      const connection = await this.connected();
      try {
        return await this.listPages(connection.client);
      } catch (error) {
        if (sent > 1 || !isSessionGone(error, connection)) throw error;
        this.forget(connection);
      }
    }
  }

  /** Ends the session: its DELETE to the upstream, then its client; nothing opens it again. */
  async close(): Promise<void> {
    this.closed = true;
    this.connection = undefined;
    this.current = undefined;
    const open = [...this.open];
    this.open.clear();
    await Promise.all(open.map((connection) => connection.end(this.clock)));
  }

  private connected(): Promise<Connection> {
    if (this.closed) return Promise.reject(new ResilienceError('stopped', 'the upstream MCP session is closed'));
    if (this.connection) return this.connection;
    const connecting = this.connect();
    this.connection = connecting;
    connecting.then(
      (connection) => {
        if (this.connection === connecting) this.current = connection;
      },
      // A failed opening is forgotten, so the next call tries again.
      () => {
        if (this.connection === connecting) this.connection = undefined;
      },
    );
    return connecting;
  }

  private async connect(): Promise<Connection> {
    // The fetch finds a call's request through the transport, made right after it.
    const routing: { transport?: CallRoutingTransport } = {};
    const transport = new CallRoutingTransport(new URL(this.endpoint.url), {
      fetch: poolFetch({
        pool: this.httpPool,
        listen: this.onToolsChanged !== undefined,
        maxResponseBytes: SESSION_ANSWER_LIMIT,
        callOf: (body) => routing.transport?.callOf(body),
        deliver: (message) => routing.transport?.receive(message),
      }),
      requestInit: { headers: { ...this.endpoint.headers } },
    });
    routing.transport = transport;
    const client = new Client({ name: SERVER_INFO.name, version: SERVER_INFO.version }, { capabilities: {} });
    // The SDK reports a listening stream's trouble here; calls hear their own failures.
    client.onerror = noop;
    const onToolsChanged = this.onToolsChanged;
    if (onToolsChanged) client.setNotificationHandler(ToolListChangedNotificationSchema, () => onToolsChanged());
    await client.connect(transport, { timeout: this.endpoint.timeoutMs });
    const connection = new Connection(client, transport);
    if (this.closed) {
      await connection.end(this.clock);
      throw new ResilienceError('stopped', 'the upstream MCP session is closed');
    }
    this.open.add(connection);
    return connection;
  }

  /** The upstream forgot the session: the next call opens a new one; this one closes when idle. */
  private forget(connection: Connection): void {
    this.open.delete(connection);
    if (this.current === connection) {
      this.current = undefined;
      this.connection = undefined;
    }
    connection.retire();
  }

  private async listPages(client: Client): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const listed = await client.request(
        { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
        ListToolsResultSchema,
        { timeout: this.endpoint.timeoutMs },
      );
      tools.push(...listed.tools);
      cursor = listed.nextCursor;
      if (cursor === undefined) break;
    }
    return tools;
  }
}

/** A 404 to a session the upstream had given: it ended or expired there (the specification's signal). */
function isSessionGone(error: unknown, connection: Connection): boolean {
  return error instanceof StreamableHTTPError && error.code === 404 && connection.hasSession;
}
