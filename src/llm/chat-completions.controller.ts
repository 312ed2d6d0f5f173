import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { resolveCallId, ResilienceError } from '../common';
import { parseIdempotencyKey } from '../dispatch';
import { callStateOf } from '../common/nest';
import { parseChatRequest } from './chat-request';
import { ChatCompletions } from './chat-completions.service';
import type { ChatCompletion } from './chat.types';

/** The OpenAI-compatible chat route: `baseURL` = the service + `/v1`, `apiKey` = a Bulkhead key. */
@Controller('v1/chat')
export class ChatCompletionsController {
  constructor(private readonly completions: ChatCompletions) {}

  @Post('completions')
  @HttpCode(200)
  async create(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ChatCompletion & { bulkhead: Record<string, unknown> }> {
    const state = callStateOf(request, reply);
    state.openaiErrors = true;
    state.callId = resolveCallId(request.headers['x-call-id']);
    void reply.header('x-call-id', state.callId);
    const chat = parseChatRequest(request.body);
    if (state.tenant === undefined || state.pool === undefined) {
      throw new ResilienceError('unauthorized', 'the call has no authenticated tenant');
    }
    const cacheControl = request.headers['cache-control'];
    const answer = await this.completions.complete({
      request: chat,
      callId: state.callId,
      tenant: state.tenant,
      pool: state.pool,
      abort: state.abort,
      cacheControl: typeof cacheControl === 'string' ? cacheControl : undefined,
      headers: reply,
      idempotencyKey: parseIdempotencyKey(request.headers['idempotency-key']),
    });
    const costUsd = answer.costUsd.toFixed(6);
    void reply
      .header('x-bulkhead-served-by', answer.servedBy)
      .header('x-bulkhead-attempts', String(answer.attempts))
      .header('x-bulkhead-cache', answer.cache)
      .header('x-bulkhead-cost-usd', costUsd);
    return {
      ...answer.completion,
      bulkhead: {
        servedBy: answer.servedBy,
        attempts: answer.attempts,
        fromCache: answer.cache === 'hit',
        costUsd: answer.costUsd,
        hedged: false,
        replayed: answer.replayed,
      },
    };
  }
}
