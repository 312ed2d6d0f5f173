import { Controller, Get, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorWireOf, ResilienceError } from '../../common';
import { callStateOf } from '../../common/nest';
import { LlmRoutes } from '../routing/llm-routes.service';
import {
  type AnthropicModel,
  anthropicModel,
  type AnthropicModelPage,
  anthropicModelPage,
  type OpenAiModel,
  openAiModel,
} from './model-list';

/**
 * `GET /v1/models`: the LLM routes the caller's tenant may use, each a "model" (its `model` is
 * the route's name), in OpenAI's list shape, or in Anthropic's when the request carries
 * `anthropic-version` (Anthropic's SDKs send it on every request). `GET /v1/models/{id}` is one.
 * Their `created` is when the routes were loaded: a route is as old as the config that made it.
 */
@Controller('v1/models')
export class ModelsController {
  constructor(private readonly routes: LlmRoutes) {}

  @Get()
  list(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): { object: 'list'; data: OpenAiModel[] } | AnthropicModelPage {
    const names = this.routes.usableBy(tenantOf(request, reply));
    if (isAnthropic(request)) return anthropicModelPage(names, this.routes.loadedAt, request.query);
    return { object: 'list', data: names.map((name) => openAiModel(name, this.routes.loadedAt)) };
  }

  @Get(':id')
  one(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): OpenAiModel | AnthropicModel {
    const tenant = tenantOf(request, reply);
    const { id } = request.params as { id: string };
    if (!this.routes.forTenant(id, tenant)) throw this.routes.unknownRouteError(tenant);
    return isAnthropic(request) ? anthropicModel(id, this.routes.loadedAt) : openAiModel(id, this.routes.loadedAt);
  }
}

function tenantOf(request: FastifyRequest, reply: FastifyReply): string {
  const { tenant } = callStateOf(request, reply);
  if (tenant === undefined) throw new ResilienceError('unauthorized', 'the call has no authenticated tenant');
  return tenant;
}

function isAnthropic(request: FastifyRequest): boolean {
  return errorWireOf(request.url, request.headers['anthropic-version']) === 'anthropic';
}
