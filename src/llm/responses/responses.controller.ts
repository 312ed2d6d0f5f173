import { Controller, Inject, Post, Req, Res } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { CLOCK, type Clock, isPromiseLike } from '../../common';
import { AppPlatform, type PlatformReply } from '../../common/nest';
import { bulkheadField, sendAnswer } from '../answer-meta';
import { ChatCompletions } from '../chat-completions.service';
import { type IngressRequest, startChatCall } from '../ingress-call';
import { SseReply } from '../streaming/sse-reply';
import { ResponseIds, toResponseObject } from './chat-to-responses-answer';
import type { ResponsesRequest } from '../wire';
import { nativeResponseObject, nativeResponsesRequest } from './native-responses';
import { parseResponsesRequest } from './responses-request';
import { toChatRequest } from './responses-to-chat-request';
import { ResponsesStreamSink } from './responses-stream-sink';
import { RecordingSseReply } from './stored/recording-sse-reply';
import { StoredResponses } from './stored/stored-responses.service';

/**
 * OpenAI's Responses API (`POST /v1/responses`) over the same pipeline as the chat route: what
 * the Vercel AI SDK's default provider and the OpenAI Agents SDK's default model call. The
 * request's references to kept responses are resolved first (stored/), then it is translated
 * into the Chat Completions request the pipeline runs, and its answer (or stream) back into a
 * response object (or its typed events), kept before it goes out when its `store` says so;
 * errors are OpenAI's. The request also carries itself as it came, resolved
 * (`native-responses.ts`): an `openai` target that serves the Responses API is sent that, and
 * the client gets its answer (or its stream's events) as it gave it.
 */
@Controller('v1/responses')
export class ResponsesController {
  private readonly platform: AppPlatform;

  constructor(
    private readonly completions: ChatCompletions,
    private readonly stored: StoredResponses,
    @Inject(CLOCK) private readonly clock: Clock,
    adapterHost: HttpAdapterHost,
  ) {
    this.platform = new AppPlatform(adapterHost);
  }

  @Post()
  async create(@Req() request: IngressRequest, @Res() reply: PlatformReply): Promise<void> {
    const platform = this.platform.of(reply);
    let parsed: ResponsesRequest | undefined;
    const call = startChatCall(platform, request, reply, 'openai', (body) => {
      parsed = parseResponsesRequest(body);
      // The chat request is made from the resolved request below, once the caller is known.
      return { request: { model: parsed.model, messages: [] } };
    });
    const resolving = this.stored.resolve(call.tenant, parsed!);
    const responses = isPromiseLike(resolving) ? await resolving : resolving;
    // What the model sees, references resolved: the exact cache and the idempotency fingerprint read this.
    call.request = toChatRequest(responses);
    // The request as it came, for a target that speaks it, whole or streamed: the cache and the
    // idempotency fingerprint key both ways of asking alike.
    call.passThrough = nativeResponsesRequest(responses);
    const ids = new ResponseIds(call.callId);
    if (call.request.stream === true) {
      const labels = { callId: call.callId };
      // Only a response to keep is recorded as it streams.
      const sse =
        responses.store === true
          ? new RecordingSseReply(platform, reply, labels, (output) =>
              this.stored.keep(call.tenant, responses, ids.response, output),
            )
          : new SseReply(platform, reply, labels);
      const requestedAt = Math.floor(this.clock.wallNow() / 1000);
      const sink = new ResponsesStreamSink(sse, responses, ids, { callId: call.callId }, requestedAt);
      await this.completions.stream({ ...call, sink });
      return;
    }
    const answer = await this.completions.complete(call);
    const native = answer.completion.passThroughAnswer;
    const body = native
      ? nativeResponseObject(responses, native, answer.completion.usage, ids)
      : toResponseObject(responses, answer.completion, ids);
    const keeping = this.stored.keep(call.tenant, responses, body.id, body.output);
    // The answer goes out once kept (or not: then it says so), so the client's next request finds it.
    body.store = isPromiseLike(keeping) ? await keeping : keeping;
    sendAnswer(platform, reply, answer, { ...body, bulkhead: bulkheadField(answer) });
  }
}
