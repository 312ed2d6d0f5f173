import { Controller, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { resolveCallId, ResilienceError } from '../common';
import { parseIdempotencyKey } from '../idempotency';
import { callStateOf } from '../common/nest';
import { parseChatRequest } from './chat-request';
import { type ChatCall, ChatCompletions } from './chat-completions.service';
import { SseReply } from './streaming/sse-reply';

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
    const state = callStateOf(request, reply);
    state.errorWire = 'openai';
    state.callId = resolveCallId(request.headers['x-call-id']);
    void reply.header('x-call-id', state.callId);
    const chat = parseChatRequest(request.body);
    if (state.tenant === undefined || state.pool === undefined) {
      throw new ResilienceError('unauthorized', 'the call has no authenticated tenant');
    }
    const cacheControl = request.headers['cache-control'];
    const call: ChatCall = {
      request: chat,
      callId: state.callId,
      tenant: state.tenant,
      pool: state.pool,
      abort: state.abort,
      cacheControl: typeof cacheControl === 'string' ? cacheControl : undefined,
      headers: reply,
      idempotencyKey: parseIdempotencyKey(request.headers['idempotency-key']),
    };
    if (chat.stream === true) {
      await this.completions.stream({ ...call, sink: new SseReply(reply, { callId: state.callId }) });
      return;
    }
    const answer = await this.completions.complete(call);
    void reply
      .code(200)
      .header('x-bulkhead-served-by', answer.servedBy)
      .header('x-bulkhead-attempts', String(answer.attempts))
      .header('x-bulkhead-cache', answer.cache)
      .header('x-bulkhead-cost-usd', answer.costUsd.toFixed(6))
      .header('x-bulkhead-hedged', String(answer.hedged))
      .send({
        ...answer.completion,
        bulkhead: {
          servedBy: answer.servedBy,
          attempts: answer.attempts,
          fromCache: answer.cache === 'hit' || answer.cache === 'semantic',
          similarity: answer.similarity,
          costUsd: answer.costUsd,
          hedged: answer.hedged,
          replayed: answer.replayed,
        },
      });
  }
}
