import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isPromiseLike } from '../../common';
import { HttpPools } from '../../containment';
import { RateLimiter } from '../../rate-limit';
import { answerHeaders, bulkheadField } from '../answer-meta';
import { ChatCompletions } from '../chat-completions.service';
import { startChatCall } from '../ingress-call';
import { LlmRoutes } from '../routing/llm-routes.service';
import { SseReply } from '../streaming/sse-reply';
import { nativeUsage, toMessagesAnswer } from './chat-to-messages-answer';
import { countInputTokens } from './input-token-count';
import { countTokensRequestSchema } from '../wire';
import { readMessagesCall } from './messages-request';
import { MessagesStreamSink } from './messages-stream-sink';

/**
 * Anthropic's Messages API (`POST /v1/messages`) over the same pipeline as the chat route:
 * Anthropic's SDKs and Claude Code point their base URL at the service, with a Bulkhead key in
 * `x-api-key` (or `Authorization: Bearer`). `anthropic` and `bedrock` targets are sent the request
 * as it came and answer as they answered; for any other target it is translated into the Chat
 * Completions request the pipeline runs, and its answer (or stream) back. Errors are Anthropic's shape.
 */
@Controller('v1/messages')
export class MessagesController {
  constructor(
    private readonly completions: ChatCompletions,
    private readonly routes: LlmRoutes,
    private readonly pools: HttpPools,
    private readonly limiter: RateLimiter,
  ) {}

  @Post()
  async create(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const call = startChatCall(request, reply, 'anthropic', (body) =>
      readMessagesCall(body, request.headers['anthropic-beta']),
    );
    if (call.request.stream === true) {
      const sink = new MessagesStreamSink(new SseReply(reply, { callId: call.callId }), { callId: call.callId });
      await this.completions.stream({ ...call, sink });
      return;
    }
    const answer = await this.completions.complete(call);
    const { passThroughAnswer, usage } = answer.completion;
    void answerHeaders(reply.code(200), answer).send({
      ...(passThroughAnswer
        ? { ...passThroughAnswer, usage: nativeUsage(passThroughAnswer.usage, usage) }
        : toMessagesAnswer(answer.completion)),
      bulkhead: bulkheadField(answer),
    });
  }

  /**
   * `POST /v1/messages/count_tokens`: the route's first target counts the request where it can
   * (an `anthropic` target), else Bulkhead's own estimate (the one its limits hold); which of
   * them answered is in `x-bulkhead-token-count` (the target's `provider/model`, or `estimate`).
   * Each count is one request against the tenant's requests-per-minute limit.
   */
  @Post('count_tokens')
  @HttpCode(200)
  async countTokens(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<{ input_tokens: number }> {
    const call = startChatCall(request, reply, 'anthropic', (body) =>
      readMessagesCall(body, request.headers['anthropic-beta'], countTokensRequestSchema),
    );
    const route = this.routes.forTenant(call.request.model, call.tenant);
    if (!route) throw this.routes.unknownRouteError(call.tenant);
    // A count reaches the target on the operator's key: it is a request for the tenant's
    // requests-per-minute limit like any other (no tokens: it produces none), so one tenant cannot
    // spend the organisation's count quota at the provider.
    const limiting = this.limiter.admit(call.tenant, 0, call.headers);
    if (isPromiseLike(limiting)) await limiting;
    const counted = await countInputTokens(route, call, {
      tenant: call.tenant,
      pool: this.pools.get(call.pool),
      abort: call.abort,
    });
    void reply.header('x-bulkhead-token-count', counted.countedBy);
    return { input_tokens: counted.tokens };
  }
}
