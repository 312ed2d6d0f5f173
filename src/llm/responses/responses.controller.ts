import { Controller, Inject, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CLOCK, type Clock } from '../../common';
import { answerHeaders, bulkheadField } from '../answer-meta';
import { ChatCompletions } from '../chat-completions.service';
import { startChatCall } from '../ingress-call';
import { SseReply } from '../streaming/sse-reply';
import { ResponseIds, toResponseObject } from './chat-to-responses-answer';
import type { ResponsesRequest } from '../wire';
import { parseResponsesRequest } from './responses-request';
import { toChatRequest } from './responses-to-chat-request';
import { ResponsesStreamSink } from './responses-stream-sink';

/**
 * OpenAI's Responses API (`POST /v1/responses`), stateless, over the same pipeline as the chat
 * route: what the Vercel AI SDK's default provider and the OpenAI Agents SDK's default model
 * call. The request is translated into the Chat Completions request the pipeline runs, and its
 * answer (or stream) back into a response object (or its typed events); errors are OpenAI's.
 */
@Controller('v1/responses')
export class ResponsesController {
  constructor(
    private readonly completions: ChatCompletions,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  @Post()
  async create(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    let responses: ResponsesRequest | undefined;
    const call = startChatCall(request, reply, 'openai', (body) => ({
      request: toChatRequest((responses = parseResponsesRequest(body))),
    }));
    const ids = new ResponseIds(call.callId);
    if (call.request.stream === true) {
      const sse = new SseReply(reply, { callId: call.callId });
      const requestedAt = Math.floor(this.clock.wallNow() / 1000);
      const sink = new ResponsesStreamSink(sse, responses!, ids, { callId: call.callId }, requestedAt);
      await this.completions.stream({ ...call, sink });
      return;
    }
    const answer = await this.completions.complete(call);
    void answerHeaders(reply.code(200), answer).send({
      ...toResponseObject(responses!, answer.completion, ids),
      bulkhead: bulkheadField(answer),
    });
  }
}
