import { Module } from '@nestjs/common';
import { DocsPage } from './docs-page';
import { buildOpenApiDocument, type OpenApiDocument } from './openapi-document';
import { OpenApiController } from './openapi.controller';
import {
  OpenApiConfigurableModule,
  OPENAPI_DOCUMENT,
  OPENAPI_MODULE_OPTIONS,
  type OpenApiModuleOptions,
} from './openapi.module-definition';

/**
 * The OpenAPI document of the service's routes, built from the schemas they validate with, at
 * `GET /openapi.json`, and Swagger UI at `GET /docs`: `OpenApiModule.forRoot({ mounted })`.
 * BulkheadModule mounts it unless `routes.docs` is false.
 */
@Module({
  controllers: [OpenApiController],
  providers: [
    {
      provide: OPENAPI_DOCUMENT,
      inject: [OPENAPI_MODULE_OPTIONS],
      useFactory: (options: OpenApiModuleOptions): OpenApiDocument =>
        buildOpenApiDocument({
          mounted: {
            tools: true,
            llm: true,
            mcp: true,
            lanes: true,
            circuits: true,
            events: true,
            admin: true,
            metrics: true,
            health: true,
            ...options.mounted,
            docs: true,
          },
          allowAnonymous: options.allowAnonymous ?? false,
        }),
    },
    DocsPage,
  ],
  exports: [OPENAPI_DOCUMENT],
})
export class OpenApiModule extends OpenApiConfigurableModule {}
