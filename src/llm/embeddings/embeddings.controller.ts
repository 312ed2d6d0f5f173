import { Controller, Post, Req, Res } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AppPlatform, type PlatformReply } from '../../common/nest';
import { bulkheadField, sendAnswer } from '../answer-meta';
import { type IngressRequest, startIngressCall } from '../ingress-call';
import { parseEmbeddingsRequest } from './embeddings-request';
import { Embeddings } from './embeddings.service';

/** How this route reads its body: one function for every request, not a closure each. */
const readEmbeddings = (body: unknown) => ({ request: parseEmbeddingsRequest(body) });

/**
 * OpenAI's embeddings route (`POST /v1/embeddings`), for the retrieval steps of agents
 * (LangChain's `OpenAIEmbeddings`, the AI SDK's `embed`/`embedMany`, LlamaIndex): `baseURL` = the
 * service + `/v1`, `apiKey` = a Bulkhead key, `model` = a route whose targets embed.
 */
@Controller('v1')
export class EmbeddingsController {
  private readonly platform: AppPlatform;

  constructor(
    private readonly embeddings: Embeddings,
    adapterHost: HttpAdapterHost,
  ) {
    this.platform = new AppPlatform(adapterHost);
  }

  @Post('embeddings')
  async create(@Req() request: IngressRequest, @Res() reply: PlatformReply): Promise<void> {
    const platform = this.platform.of(reply);
    const call = startIngressCall(platform, request, reply, 'openai', readEmbeddings);
    const served = await this.embeddings.create(call);
    sendAnswer(platform, reply, served, { ...served.answer, bulkhead: bulkheadField(served) });
  }
}
