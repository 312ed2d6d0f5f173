import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LaneRegistry, resolveCallId } from '../bulkhead';
import { ANONYMOUS_TENANT, ResilienceError } from '../common';
import { callStateOf } from '../common/nest';
import { NAME_PATTERN } from '../config';
import { CallPipeline, type ToolCallSuccess } from './call-pipeline.service';
import { parseInvokeRequest } from './invoke-request';
import { ToolRegistry } from './tool-registry.service';

/**
 * The tool routes. They call the pipeline directly, with no interceptor on the way: on
 * Nest + Fastify each interceptor costs about a quarter of a route's throughput (PITFALLS.md 12).
 */
@Controller('v1/tools')
export class ToolsController {
  constructor(
    private readonly tools: ToolRegistry,
    private readonly lanes: LaneRegistry,
    private readonly pipeline: CallPipeline,
  ) {}

  @Post(':toolId/invoke')
  @HttpCode(200)
  invoke(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<ToolCallSuccess> {
    const state = callStateOf(request, reply);
    const callId = resolveCallId(request.headers['x-call-id']);
    state.callId = callId;
    void reply.header('x-call-id', callId);
    const toolId = (request.params as { toolId: string }).toolId;
    const tool = this.tools.get(toolId);
    if (!tool) {
      // Echo the id only when it could be a tool's name: it is caller input.
      const named = NAME_PATTERN.test(toolId) ? ` '${toolId}'` : '';
      throw new ResilienceError('not_found', `unknown tool${named}`);
    }
    state.toolId = tool.id;
    const lane = this.lanes.get(tool.lane)!;
    const options = parseInvokeRequest(tool, lane.queueTtlMs, request.body, request.headers);
    return this.pipeline.invoke({ tool, callId, tenant: ANONYMOUS_TENANT, abort: state.abort, ...options });
  }
}
