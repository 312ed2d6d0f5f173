import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { answerHeaders, bulkheadField } from '../answer-meta';
import { ChatCompletions } from '../chat-completions.service';
import { startChatCall } from '../ingress-call';
import { estimateInputTokens } from '../pricing';
import { LlmRoutes } from '../routing/llm-routes.service';
import { SseReply } from '../streaming/sse-reply';
import { toMessagesAnswer } from './messages-answer';
import { countTokensRequestSchema, parseMessagesRequest, toChatRequest } from './messages-request';
import { MessagesStreamSink } from './messages-stream-sink';

const readChat = (body: unknown) => toChatRequest(parseMessagesRequest(body));

/**
 * Anthropic's Messages API (`POST /v1/messages`) over the same pipeline as the chat route:
 * Anthropic's SDKs and Claude Code point their base URL at the service, with a Bulkhead key in
 * `x-api-key` (or `Authorization: Bearer`). The request is translated into the Chat Completions
 * request the pipeline runs, and its answer (or stream) back; errors are Anthropic's shape.
 */
@Controller('v1/messages')
export class MessagesController {
  constructor(
    private readonly completions: ChatCompletions,
    private readonly routes: LlmRoutes,
  ) {}

  @Post()
  async create(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const call = startChatCall(request, reply, 'anthropic', readChat);
    if (call.request.stream === true) {
      const sink = new MessagesStreamSink(new SseReply(reply, { callId: call.callId }), { callId: call.callId });
      await this.completions.stream({ ...call, sink });
      return;
    }
    const answer = await this.completions.complete(call);
    void answerHeaders(reply.code(200), answer).send({
      ...toMessagesAnswer(answer.completion),
      bulkhead: bulkheadField(answer),
    });
  }

  /**
   * `POST /v1/messages/count_tokens`: Bulkhead's own estimate of the request's input tokens (the
   * one its rate limits and budgets hold), said so in `x-bulkhead-token-count: estimate`.
   */
  @Post('count_tokens')
  @HttpCode(200)
  countTokens(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): { input_tokens: number } {
    const call = startChatCall(request, reply, 'anthropic', (body) =>
      toChatRequest(parseMessagesRequest(body, countTokensRequestSchema)),
    );
    if (!this.routes.forTenant(call.request.model, call.tenant)) throw this.routes.unknownRouteError(call.tenant);
    void reply.header('x-bulkhead-token-count', 'estimate');
    return { input_tokens: estimateInputTokens(call.request) };
  }
}
