import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { type Clock, noop, ResilienceError, type TimerHandle } from '../common';
import type { HttpPool, PoolName } from '../containment';
import { TENANT_SESSION_LIMITS, type TenantSessionLimits, TenantSessions } from './tenant-sessions';
import type { UpstreamCall } from './upstream-call';
import { type UpstreamEndpoint, UpstreamSession } from './upstream-session';

/** A tool as the upstream server lists it: name, description, input and output JSON Schemas, annotations. */
export type UpstreamTool = Tool;

/** Where sessions get their pool. */
export interface PoolSource {
  get(name: PoolName): HttpPool;
}

/** Which session a call travels in. */
export interface SessionKey {
  /** The call's pool: a session is never shared between pools. */
  readonly pool: PoolName;
  /** The tenant whose own session it is; none for the pool's own session, shared by every tenant. */
  readonly tenant?: string;
}

/** The first wait before listing again a server that could not be listed; doubled up to the last. */
const FIRST_RELIST_MS = 1_000;
const LAST_RELIST_MS = 60_000;

/**
 * One upstream MCP server (a URL and its headers): its sessions and the tools it listed last.
 * Each pool has a session of its own, shared by every tenant (`session: per-pool` calls); each
 * tenant has its own per pool too ({@link TenantSessions}, bounded and ended when idle). Listing
 * goes through the normal pool's own session, the only one that listens for
 * `notifications/tools/list_changed` and lists again when told. A server that could not be
 * listed is listed again in the background, on the clock, until it answers, and at once after
 * a call through it succeeds. Once closed, nothing opens a session again: calls and listings
 * are refused `stopped`.
 */
export class McpUpstream {
  private readonly sessions = new Map<PoolName, UpstreamSession>();
  private readonly tenantSessions: TenantSessions<UpstreamSession>;
  private readonly settings: { -readonly [K in keyof UpstreamEndpoint]: UpstreamEndpoint[K] };
  private listed: ReadonlyMap<string, UpstreamTool> | undefined;
  private listedShape = '';
  private listing: Promise<ReadonlyMap<string, UpstreamTool>> | undefined;
  private listAgain = false;
  private relistTimer: TimerHandle | undefined;
  private relistDelayMs = FIRST_RELIST_MS;
  private listeners: Array<() => void> = [];
  private closed = false;

  constructor(
    endpoint: UpstreamEndpoint,
    private readonly pools: PoolSource,
    private readonly clock: Clock,
    limits: TenantSessionLimits = TENANT_SESSION_LIMITS,
  ) {
    this.settings = { ...endpoint };
    this.tenantSessions = new TenantSessions(
      limits,
      clock,
      (pool) => new UpstreamSession(this.settings, this.pools.get(pool), this.clock),
    );
  }

  get url(): string {
    return this.settings.url;
  }

  /** Another entry naming this server: its session's own requests wait as long as the most patient entry's. */
  widen(timeoutMs: number): void {
    this.settings.timeoutMs = Math.max(this.settings.timeoutMs, timeoutMs);
  }

  /**
   * One `tools/call` in the session `key` names (see {@link UpstreamSession.callTool}), opened
   * first if need be; `stopped` once the server is closed, with nothing opened.
   */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    call: UpstreamCall,
    key: SessionKey,
  ): Promise<CallToolResult> {
    if (key.tenant === undefined) return this.poolSession(key.pool).callTool(name, args, call);
    // Closed with this server: refuses `stopped` itself, opening nothing.
    return this.tenantSessions.use(key.pool, key.tenant, (session) => session.callTool(name, args, call));
  }

  /** The pool's own session, made on first use; only the normal pool's listens for notifications. */
  private poolSession(pool: PoolName): UpstreamSession {
    if (this.closed) throw stopped();
    let session = this.sessions.get(pool);
    if (!session) {
      const onToolsChanged = pool === 'normal' ? () => this.toolsChanged() : undefined;
      session = new UpstreamSession(this.settings, this.pools.get(pool), this.clock, onToolsChanged);
      this.sessions.set(pool, session);
    }
    return session;
  }

  /** The tools the server listed last, by name; undefined until it has been listed once. */
  get tools(): ReadonlyMap<string, UpstreamTool> | undefined {
    return this.listed;
  }

  /** Calls `listener` when the tools listed change (names, descriptions, schemas or annotations); returns its remover. */
  onChange(listener: () => void): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((item) => item !== listener);
    };
  }

  /** Lists the server's tools now; `timeout` when it has not answered within `waitMs` of the clock. */
  list(waitMs: number): Promise<ReadonlyMap<string, UpstreamTool>> {
    const listing = this.relist();
    let timer: TimerHandle | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = this.clock.setTimer(
        () => reject(new ResilienceError('timeout', `did not list its tools within ${waitMs} ms`)),
        waitMs,
        { unref: true },
      );
    });
    return Promise.race([listing, deadline]).finally(() => this.clock.clearTimer(timer));
  }

  /** Keeps listing in the background (backing off on the clock) until the server answers once. */
  listUntilAnswered(): void {
    if (this.listed || this.closed || this.relistTimer !== undefined) return;
    this.relistTimer = this.clock.setTimer(
      () => {
        this.relistTimer = undefined;
        this.relist().catch(() => this.listUntilAnswered());
      },
      this.relistDelayMs,
      { unref: true },
    );
    this.relistDelayMs = Math.min(this.relistDelayMs * 2, LAST_RELIST_MS);
  }

  /** A call went through: a server never listed yet is reachable now, so it is listed at once. */
  answered(): void {
    if (this.listed || this.listing || this.closed) return;
    this.relist().catch(() => this.listUntilAnswered());
  }

  /** Ends every session (their DELETEs) and stops listing; nothing opens one again. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.relistTimer !== undefined) this.clock.clearTimer(this.relistTimer);
    this.relistTimer = undefined;
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all([...sessions.map((session) => session.close()), this.tenantSessions.close()]);
  }

  /** One listing at a time; a change announced while one runs lists again after it. */
  private relist(): Promise<ReadonlyMap<string, UpstreamTool>> {
    if (this.listing) return this.listing;
    if (this.closed) return Promise.reject(stopped());
    const listing = this.poolSession('normal')
      .listTools()
      .then((tools) => this.update(tools));
    this.listing = listing;
    const done = () => {
      this.listing = undefined;
      if (this.listAgain && !this.closed) {
        this.listAgain = false;
        this.relist().catch(noop);
      }
    };
    listing.then(done, done);
    return listing;
  }

  private toolsChanged(): void {
    if (this.closed) return;
    if (this.listing) {
      this.listAgain = true;
      return;
    }
    this.relist().catch(noop);
  }

  private update(tools: UpstreamTool[]): ReadonlyMap<string, UpstreamTool> {
    const listed = new Map(tools.map((tool) => [tool.name, tool]));
    // Everything a tool's pin covers (src/mcp-pinning), so a change to any of it is heard.
    const shape = JSON.stringify(
      tools.map((tool) => [tool.name, tool.description, tool.inputSchema, tool.outputSchema, tool.annotations]),
    );
    if (this.relistTimer !== undefined) this.clock.clearTimer(this.relistTimer);
    this.relistTimer = undefined;
    this.relistDelayMs = FIRST_RELIST_MS;
    const changed = this.listed !== undefined && shape !== this.listedShape;
    const first = this.listed === undefined;
    this.listed = listed;
    this.listedShape = shape;
    if (changed || first) for (const listener of this.listeners) listener();
    return listed;
  }
}

function stopped(): ResilienceError {
  return new ResilienceError('stopped', 'the upstream MCP server’s sessions are closed');
}
