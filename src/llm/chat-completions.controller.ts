import { Controller, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { answerHeaders, bulkheadField } from './answer-meta';
import { parseChatRequest } from './chat-request';
import { ChatCompletions } from './chat-completions.service';
import { startChatCall } from './ingress-call';
import { SseReply } from './streaming/sse-reply';

/** How this route reads its body for startChatCall: one function for every request, not a closure each. */
const readChat = (body: unknown) => ({ request: parseChatRequest(body) });

/** The OpenAI-compatible chat route: `baseURL` = the service + `/v1`, `apiKey` = a Bulkhead key. */
@Controller('v1/chat')
export class ChatCompletionsController {
  constructor(private readonly completions: ChatCompletions) {}

  /**
   * Answers itself (no passthrough): a streamed answer is written as it comes, from its commit
   * point on, and a failure before it is thrown like any other, to the envelope filter.
   */
  @Post('completions')
  async create(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const call = startChatCall(request, reply, 'openai', readChat);
    if (call.request.stream === true) {
      await this.completions.stream({ ...call, sink: new SseReply(reply, { callId: call.callId }) });
      return;
    }
    const answer = await this.completions.complete(call);
    void answerHeaders(reply.code(200), answer).send({ ...answer.completion, bulkhead: bulkheadField(answer) });
  }
}
