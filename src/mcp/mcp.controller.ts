import { Controller, Delete, Get, HttpCode, Post, Req, Res, UseGuards } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { askedPriorityOf, PRIORITY_HEADER } from '../bulkhead';
import { ResilienceError } from '../common';
import {
  AppPlatform,
  type CallState,
  callStateOf,
  OwnOriginPolicy,
  type PlatformReply,
  type PlatformRequest,
} from '../common/nest';
import { McpHttpRequest } from './mcp-http-request';
import { McpOriginGuard } from './mcp-origin.guard';
import type { McpSession } from './mcp-session';
import type { SessionEntry } from '../mcp-client';
import { type McpRequest, McpSessions } from './mcp-sessions.service';

/**
 * `/mcp`: the Streamable HTTP transport of MCP. POST carries JSON-RPC messages (an `initialize`
 * without `Mcp-Session-Id` opens a session), GET opens a session's event stream, DELETE ends a
 * session. Like every tenant route it runs after the containment guard: the API key names the
 * tenant, the snapshot gives the pool (or refuses a tenant contained under `hard`), per request;
 * then a request from a web page it does not allow is refused (`403`), whichever way it would go.
 */
@Controller('mcp')
@OwnOriginPolicy()
@UseGuards(McpOriginGuard)
export class McpController {
  private readonly platform: AppPlatform;

  constructor(
    private readonly sessions: McpSessions,
    adapterHost: HttpAdapterHost,
  ) {
    this.platform = new AppPlatform(adapterHost);
  }

  @Post()
  async post(@Req() request: McpRequest, @Res() reply: PlatformReply): Promise<void> {
    const caller = callerOf(request, reply);
    const id = sessionIdOf(request);
    let entry: SessionEntry<McpSession>;
    if (id !== undefined) entry = this.sessions.require(id, caller.tenant);
    else if (opensSession(request.body)) entry = await this.sessions.open(caller.tenant);
    else throw new ResilienceError('invalid_request', 'Mcp-Session-Id is required: only an initialize opens a session');
    await this.sessions.serve(entry, caller, this.platform.of(reply), request, reply);
  }

  @Get()
  async listen(@Req() request: McpRequest, @Res() reply: PlatformReply): Promise<void> {
    const caller = callerOf(request, reply);
    const entry = this.sessions.require(requiredSessionId(request), caller.tenant);
    await this.sessions.serve(entry, caller, this.platform.of(reply), request, reply);
  }

  @Delete()
  @HttpCode(200)
  async end(
    @Req() request: PlatformRequest,
    @Res({ passthrough: true }) reply: PlatformReply,
  ): Promise<{ closed: true }> {
    const caller = callerOf(request, reply);
    await this.sessions.close(this.sessions.require(requiredSessionId(request), caller.tenant));
    return { closed: true };
  }
}

/** Who sends the request, as the containment guard found, and its cancellation. */
function callerOf(request: PlatformRequest, reply: PlatformReply): McpHttpRequest {
  const state: CallState = callStateOf(request, reply);
  // The guard runs on every tenant route; a request it did not route belongs to nobody.
  if (state.tenant === undefined || state.pool === undefined) {
    throw new ResilienceError('unauthorized', 'the request has no authenticated tenant');
  }
  const asked = askedPriorityOf(request.headers[PRIORITY_HEADER]);
  return new McpHttpRequest(state.tenant, state.pool, state.contained ?? true, state.abort, asked);
}

function sessionIdOf(request: PlatformRequest): string | undefined {
  const id = request.headers['mcp-session-id'];
  if (id === undefined) return undefined;
  // The SDK's ids are UUIDs; anything else names no session (and is not echoed).
  if (typeof id !== 'string' || !/^[\x21-\x7e]{1,128}$/.test(id)) {
    throw new ResilienceError('invalid_request', 'Mcp-Session-Id must be 1-128 visible ASCII characters');
  }
  return id;
}

function requiredSessionId(request: PlatformRequest): string {
  const id = sessionIdOf(request);
  if (id === undefined) throw new ResilienceError('invalid_request', 'Mcp-Session-Id is required');
  return id;
}

/** Whether the body is an `initialize` request, the one message that opens a session. */
function opensSession(body: unknown): boolean {
  return typeof body === 'object' && body !== null && (body as { method?: unknown }).method === 'initialize';
}
