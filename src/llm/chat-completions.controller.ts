import { Controller, Post, Req, Res } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AppPlatform, type PlatformReply } from '../common/nest';
import { bulkheadField, sendAnswer } from './answer-meta';
import { parseChatRequest } from './chat-request';
import { ChatCompletions } from './chat-completions.service';
import { type IngressRequest, startChatCall } from './ingress-call';
import { SseReply } from './streaming/sse-reply';

/** How this route reads its body for startChatCall: one function for every request, not a closure each. */
const readChat = (body: unknown) => ({ request: parseChatRequest(body) });

/** The OpenAI-compatible chat route: `baseURL` = the service + `/v1`, `apiKey` = a Bulkhead key. */
@Controller('v1/chat')
export class ChatCompletionsController {
  private readonly platform: AppPlatform;

  constructor(
    private readonly completions: ChatCompletions,
    adapterHost: HttpAdapterHost,
  ) {
    this.platform = new AppPlatform(adapterHost);
  }

  /**
   * Answers itself (no passthrough): a streamed answer is written as it comes, from its commit
   * point on, and a failure before it is thrown like any other, to the envelope filter.
   */
  @Post('completions')
  async create(@Req() request: IngressRequest, @Res() reply: PlatformReply): Promise<void> {
    const platform = this.platform.of(reply);
    const call = startChatCall(platform, request, reply, 'openai', readChat);
    if (call.request.stream === true) {
      await this.completions.stream({ ...call, sink: new SseReply(platform, reply, { callId: call.callId }) });
      return;
    }
    const answer = await this.completions.complete(call);
    sendAnswer(platform, reply, answer, { ...answer.completion, bulkhead: bulkheadField(answer) });
  }
}
