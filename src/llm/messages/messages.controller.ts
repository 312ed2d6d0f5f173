import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { isPromiseLike } from '../../common';
import { AppPlatform, type PlatformReply } from '../../common/nest';
import { HttpPools } from '../../containment';
import { RateLimiter } from '../../rate-limit';
import { bulkheadField, sendAnswer } from '../answer-meta';
import { ChatCompletions } from '../chat-completions.service';
import { type IngressRequest, startChatCall } from '../ingress-call';
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
  private readonly platform: AppPlatform;

  constructor(
    private readonly completions: ChatCompletions,
    private readonly routes: LlmRoutes,
    private readonly pools: HttpPools,
    private readonly limiter: RateLimiter,
    adapterHost: HttpAdapterHost,
  ) {
    this.platform = new AppPlatform(adapterHost);
  }

  @Post()
  async create(@Req() request: IngressRequest, @Res() reply: PlatformReply): Promise<void> {
    const platform = this.platform.of(reply);
    const call = startChatCall(platform, request, reply, 'anthropic', (body) =>
      readMessagesCall(body, request.headers['anthropic-beta']),
    );
    if (call.request.stream === true) {
      const sse = new SseReply(platform, reply, { callId: call.callId });
      await this.completions.stream({ ...call, sink: new MessagesStreamSink(sse, { callId: call.callId }) });
      return;
    }
    const answer = await this.completions.complete(call);
    const { passThroughAnswer, usage } = answer.completion;
    sendAnswer(platform, reply, answer, {
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
    @Req() request: IngressRequest,
    @Res({ passthrough: true }) reply: PlatformReply,
  ): Promise<{ input_tokens: number }> {
    const platform = this.platform.of(reply);
    const call = startChatCall(platform, request, reply, 'anthropic', (body) =>
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
    platform.setHeader(reply, 'x-bulkhead-token-count', counted.countedBy);
    return { input_tokens: counted.tokens };
  }
}
