import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { OriginPolicy, ResilienceError } from '../common';
import { callStateOf, type PlatformReply, type PlatformRequest } from '../common/nest';
import { DEFAULT_MCP, MCP_MODULE_OPTIONS, type McpModuleOptions } from './mcp.module-definition';

/**
 * Refuses `/mcp` requests from web pages it does not allow ({@link OriginPolicy}:
 * `mcp.allowedOrigins`, `mcp.allowedHosts`), on every method and before the SDK or the direct
 * path sees them: `403`, the envelope as a JSON-RPC error without id (the MCP specification's
 * answer to an invalid `Origin`).
 */
@Injectable()
export class McpOriginGuard implements CanActivate {
  private readonly policy: OriginPolicy;

  constructor(@Inject(MCP_MODULE_OPTIONS) options: McpModuleOptions) {
    const mcp = { ...DEFAULT_MCP, ...options.mcp };
    this.policy = new OriginPolicy({ allowedOrigins: mcp.allowedOrigins, allowedHosts: mcp.allowedHosts });
  }

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const request = http.getRequest<PlatformRequest>();
    const refusal = this.policy.refusal(request.headers);
    if (refusal === undefined) return true;
    callStateOf(request, http.getResponse<PlatformReply>()).errorWire = 'jsonrpc';
    throw new ResilienceError('invalid_request', refusal, { status: 403 });
  }
}
