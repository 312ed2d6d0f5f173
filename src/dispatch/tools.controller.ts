import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { askedPriorityOf, DEFAULT_PRIORITY, LaneRegistry, PRIORITY_HEADER, PriorityPolicy } from '../bulkhead';
import { type ErrorEnvelope, ResilienceError, resolveCallId } from '../common';
import { type CallState, callStateOf, type PlatformRequest } from '../common/nest';
import type { PoolName } from '../containment';
import type { HeaderSink } from '../rate-limit';
import { parseBatchRequest } from './batch/batch-request';
import { BatchRunner } from './batch/batch-runner.service';
import { CallPipeline, type ToolCallSuccess } from './call-pipeline.service';
import { parseInvokeRequest } from './invoke-request';
import { ToolRegistry } from './tool-registry.service';

/** A tool route's request on either platform: both parse the JSON body and the path's parameters. */
type ToolRequest = PlatformRequest & { readonly params: unknown; readonly body: unknown };

/**
 * A tool route's reply on either platform: a `FastifyReply` and an Express `Response` both set a
 * header with `header(name, value)`, which is all these routes do with it (the rate limit's
 * headers, `X-Call-Id`); Nest sends the result (`passthrough`).
 */
type ToolReply = HeaderSink;

/**
 * The tool routes. They call the pipeline directly, with no interceptor on the way: on
 * Nest + Fastify each interceptor costs about a quarter of a route's throughput (docs/pitfalls.md #12).
 */
@Controller('v1/tools')
export class ToolsController {
  constructor(
    private readonly tools: ToolRegistry,
    private readonly lanes: LaneRegistry,
    private readonly pipeline: CallPipeline,
    private readonly batches: BatchRunner,
    private readonly priorities: PriorityPolicy,
  ) {}

  @Post(':toolId/invoke')
  @HttpCode(200)
  invoke(@Req() request: ToolRequest, @Res({ passthrough: true }) reply: ToolReply): Promise<ToolCallSuccess> {
    const state = startCall(request, reply);
    const caller = callerOf(state);
    const tool = this.tools.requireFor((request.params as { toolId: string }).toolId, caller.tenant);
    state.toolId = tool.id;
    const lane = this.lanes.get(tool.lane)!;
    const options = parseInvokeRequest(tool, lane.queueTtlMs, request.body, request.headers);
    // Spelled out, not spread: this object is made on every call.
    return this.pipeline.invoke({
      tool,
      arguments: options.arguments,
      callId: state.callId!,
      tenant: caller.tenant,
      pool: caller.pool,
      contained: caller.contained,
      abort: state.abort,
      timeoutMs: options.timeoutMs,
      queueTtlMs: options.queueTtlMs,
      idempotencyKey: options.idempotencyKey,
      headers: reply,
      priority: this.priorities.classOf(
        tool.priority ?? DEFAULT_PRIORITY,
        request.headers[PRIORITY_HEADER],
        caller.tenant,
      ),
    });
  }

  @Post('batch')
  @HttpCode(200)
  batch(
    @Req() request: ToolRequest,
    @Res({ passthrough: true }) reply: ToolReply,
  ): Promise<{ results: Array<ToolCallSuccess | ErrorEnvelope> }> {
    const state = startCall(request, reply);
    const caller = callerOf(state);
    // Read before any entry runs: a header that names no class refuses the batch.
    const asked = askedPriorityOf(request.headers[PRIORITY_HEADER]);
    return this.batches.run(parseBatchRequest(request.body), {
      ...caller,
      abort: state.abort,
      priorityOf: (tool) => this.priorities.classOf(tool.priority ?? DEFAULT_PRIORITY, asked, caller.tenant),
    });
  }
}

/** Who calls, as the containment guard found: tenant, pool, and whether the tenant is contained. */
function callerOf(state: CallState): { tenant: string; pool: PoolName; contained: boolean } {
  // The guard runs on every tool route; a call it did not route belongs to nobody.
  if (state.tenant === undefined || state.pool === undefined) {
    throw new ResilienceError('unauthorized', 'the call has no authenticated tenant');
  }
  return { tenant: state.tenant, pool: state.pool, contained: state.contained ?? true };
}

/** The request's call state with its call id, which the response carries in `X-Call-Id`. */
function startCall(request: ToolRequest, reply: ToolReply): CallState {
  const state = callStateOf(request, reply);
  state.callId = resolveCallId(request.headers['x-call-id']);
  reply.header('x-call-id', state.callId);
  return state;
}
