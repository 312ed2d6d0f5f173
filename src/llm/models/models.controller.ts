import { Controller, Get, Req, Res } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { errorWireOf, ResilienceError } from '../../common';
import { AppPlatform, callStateOf, type PlatformReply, type PlatformRequest } from '../../common/nest';
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
  private readonly platform: AppPlatform;

  constructor(
    private readonly routes: LlmRoutes,
    adapterHost: HttpAdapterHost,
  ) {
    this.platform = new AppPlatform(adapterHost);
  }

  @Get()
  list(
    @Req() request: ModelsRequest,
    @Res({ passthrough: true }) reply: PlatformReply,
  ): { object: 'list'; data: OpenAiModel[] } | AnthropicModelPage {
    const names = this.routes.usableBy(tenantOf(request, reply));
    if (this.isAnthropic(request, reply)) return anthropicModelPage(names, this.routes.loadedAt, request.query);
    return { object: 'list', data: names.map((name) => openAiModel(name, this.routes.loadedAt)) };
  }

  @Get(':id')
  one(@Req() request: ModelsRequest, @Res({ passthrough: true }) reply: PlatformReply): OpenAiModel | AnthropicModel {
    const tenant = tenantOf(request, reply);
    const { id } = request.params as { id: string };
    if (!this.routes.forTenant(id, tenant)) throw this.routes.unknownRouteError(tenant);
    return this.isAnthropic(request, reply)
      ? anthropicModel(id, this.routes.loadedAt)
      : openAiModel(id, this.routes.loadedAt);
  }

  private isAnthropic(request: ModelsRequest, reply: PlatformReply): boolean {
    const url = this.platform.of(reply).url(request);
    return errorWireOf(url, request.headers['anthropic-version']) === 'anthropic';
  }
}

/** A models route's request on either platform: both parse the query and the path's parameters. */
type ModelsRequest = PlatformRequest & { readonly query: unknown; readonly params: unknown };

function tenantOf(request: PlatformRequest, reply: PlatformReply): string {
  const { tenant } = callStateOf(request, reply);
  if (tenant === undefined) throw new ResilienceError('unauthorized', 'the call has no authenticated tenant');
  return tenant;
}
