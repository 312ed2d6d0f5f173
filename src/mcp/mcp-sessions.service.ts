import { randomUUID } from 'node:crypto';
import { type BeforeApplicationShutdown, Inject, Injectable, type OnModuleDestroy, Optional } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { CLOCK, type Clock, ResilienceError, type TimerHandle } from '../common';
import type { HttpPlatform, PlatformReply, PlatformRequest } from '../common/nest';
import { ToolRegistry } from '../dispatch';
import { Lifecycle } from '../lifecycle';
import { directToolCallOf, type DirectToolCall } from './direct-tool-call';
import type { McpHttpRequest } from './mcp-http-request';
import { McpSession } from './mcp-session';
import { McpSessionTable, type SessionEntry } from '../mcp-client';
import { McpToolCalls } from './mcp-tool-calls.service';
import { DEFAULT_MCP, MCP_MODULE_OPTIONS, type McpModuleOptions } from './mcp.module-definition';
import { refusalOf, toWebRequest, writeWebResponse } from './web-exchange';

/** An `/mcp` request on either platform: both carry the method and parse the JSON body. */
export type McpRequest = PlatformRequest & { readonly method?: string; readonly body?: unknown };

/** How often idle sessions are looked for, at most: a session outlives its idle time by up to this. */
const MAX_SWEEP_MS = 60_000;

/**
 * The MCP sessions of this process: opened by an `initialize` (bounded, see
 * {@link McpSessionTable}), found by `Mcp-Session-Id` for the tenant that opened them only,
 * closed by their client (DELETE), by eviction, after their idle time on the clock, and at
 * shutdown once the drain is over. Each HTTP request is handed to its session's transport here.
 */
@Injectable()
export class McpSessions implements OnModuleDestroy, BeforeApplicationShutdown {
  private readonly table: McpSessionTable<McpSession>;
  private readonly responses: 'sse' | 'json';
  private readonly sweepEveryMs: number;
  private sweepTimer: TimerHandle | undefined;
  /**
   * Whether plain `tools/call` requests go the direct way (the default); false hands every
   * request to the SDK, so the two answers can be compared (the tests do).
   */
  answersDirectly = true;
  private readonly stopFollowingTools: () => void;

  constructor(
    @Inject(MCP_MODULE_OPTIONS) options: McpModuleOptions,
    private readonly tools: McpToolCalls,
    @Inject(CLOCK) private readonly clock: Clock,
    // Optional: an app without the drain closes its sessions at once.
    @Optional() @Inject(Lifecycle) private readonly lifecycle: Lifecycle | null,
    registry: ToolRegistry,
  ) {
    this.stopFollowingTools = registry.onChange(() => {
      for (const session of this.table.sessions()) session.toolsChanged();
    });
    const mcp = { ...DEFAULT_MCP, ...options.mcp };
    this.table = new McpSessionTable(
      { maxSessions: mcp.maxSessions, maxSessionsPerTenant: mcp.maxSessionsPerTenant, idleMs: mcp.sessionIdleMs },
      clock,
    );
    this.responses = mcp.responses;
    this.sweepEveryMs = Math.min(mcp.sessionIdleMs, MAX_SWEEP_MS);
  }

  /** Nest destroys modules before the drain: the sessions stay open until it is over. */
  onModuleDestroy(): void {
    this.stopFollowingTools();
    if (this.sweepTimer !== undefined) this.clock.clearTimer(this.sweepTimer);
    this.sweepTimer = undefined;
  }

  /**
   * Sessions end after the drain, so the calls in them finish first and are answered; their
   * streams must end before the HTTP server closes, which waits for every open response.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.lifecycle?.drain();
    this.closeAll(this.table.clear());
  }

  /** Sessions open now. */
  get size(): number {
    return this.table.size;
  }

  /**
   * A new session for `tenant`, for the `initialize` request that opens it; room is made first
   * (or `queue_full`), and nothing is opened while the service shuts down.
   */
  async open(tenant: string): Promise<SessionEntry<McpSession>> {
    if (this.lifecycle?.draining) throw new ResilienceError('stopped', 'the service is shutting down');
    this.closeAll(this.table.makeRoom(tenant));
    const session = new McpSession(randomUUID(), this.tools, this.responses, this.clock);
    await session.connect();
    const entry = this.table.add(session.id, tenant, session);
    this.armSweep();
    return entry;
  }

  /** The session `id` of `tenant`; `not_found` for an unknown, closed or expired one, or another tenant's. */
  require(id: string, tenant: string): SessionEntry<McpSession> {
    const entry = this.table.find(id, tenant, (expired) => void expired.close());
    if (!entry)
      throw new ResilienceError('not_found', 'unknown MCP session: it ended or expired; initialize a new one');
    return entry;
  }

  /** Ends a session at its client's request (DELETE): its streams close and its calls are aborted. */
  async close(entry: SessionEntry<McpSession>): Promise<void> {
    this.table.remove(entry.id);
    await entry.session.close();
  }

  /**
   * Hands one HTTP request to the session's transport and writes its answer. A refusal of the
   * transport (wrong `Accept`, a malformed message, an unsupported protocol version) is thrown
   * as the envelope's error, before anything is written; a session whose `initialize` was
   * refused is dropped. A POST keeps the session in use until its answer ends. A plain
   * `tools/call` on an open session goes the direct way, answered as the SDK would answer it.
   * The request and reply are `platform`'s; the answer is written on the Node response under it.
   */
  async serve(
    entry: SessionEntry<McpSession>,
    caller: McpHttpRequest,
    platform: HttpPlatform,
    request: McpRequest,
    reply: PlatformReply,
  ): Promise<void> {
    const { session } = entry;
    const node = platform.rawRequest(request);
    const direct = this.answersDirectly && request.method === 'POST' ? directToolCallOf(request.body, node) : undefined;
    if (direct && session.takesDirectly(direct.id)) {
      return this.callDirectly(entry, direct, platform.hijack(reply), caller);
    }
    const listening = request.method === 'GET';
    if (listening) this.table.touch(entry);
    else this.table.enter(entry);
    let left = false;
    const leave = () => {
      if (left) return;
      left = true;
      if (listening) this.table.touch(entry);
      else this.table.leave(entry);
    };
    try {
      const answering = session.transport.handleRequest(toWebRequest(node, platform.url(request)), {
        parsedBody: request.body ?? undefined,
        authInfo: caller.toAuthInfo(),
      });
      const response =
        this.responses === 'json' && request.method === 'POST'
          ? await Promise.race([answering, caller.whenCancelled().then(accepted)])
          : await answering;
      if (!session.initialized) {
        this.table.remove(entry.id);
        void session.close();
      }
      if (response.status >= 400) throw await refusalOf(response);
      const raw = platform.hijack(reply);
      raw.once('close', leave);
      await writeWebResponse(response, raw);
    } catch (error) {
      leave();
      throw error;
    }
  }

  private async callDirectly(
    entry: SessionEntry<McpSession>,
    call: DirectToolCall,
    raw: ServerResponse,
    caller: McpHttpRequest,
  ): Promise<void> {
    this.table.enter(entry);
    raw.once('close', () => this.table.leave(entry));
    await entry.session.callDirectly(call, caller, raw);
  }

  private closeAll(sessions: McpSession[]): void {
    for (const session of sessions) void session.close();
  }

  /** Looks for idle sessions while there are sessions: an app nobody opened one in keeps no timer. */
  private armSweep(): void {
    if (this.sweepTimer !== undefined) return;
    this.sweepTimer = this.clock.setTimer(
      () => {
        this.sweepTimer = undefined;
        this.closeAll(this.table.expire());
        if (this.table.size > 0) this.armSweep();
      },
      this.sweepEveryMs,
      { unref: true },
    );
  }
}

/** The answer of a POST whose request was cancelled: accepted, with nothing to say. */
function accepted(): Response {
  return new Response(null, { status: 202 });
}
