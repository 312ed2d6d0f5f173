import { Controller, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { answerHeaders, bulkheadField } from '../answer-meta';
import { startIngressCall } from '../ingress-call';
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
  constructor(private readonly embeddings: Embeddings) {}

  @Post('embeddings')
  async create(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const call = startIngressCall(request, reply, 'openai', readEmbeddings);
    const served = await this.embeddings.create(call);
    void answerHeaders(reply.code(200), served).send({ ...served.answer, bulkhead: bulkheadField(served) });
  }
}
