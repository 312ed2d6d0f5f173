import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { OpenApiDocument } from './openapi-document';
import { OPENAPI_DOCUMENT } from './openapi.module-definition';

/** Where the page is served; its scripts and styles are under it. */
export const DOCS_PATH = '/docs';

/**
 * Every script and style from the service itself (the service may run without internet), and
 * no `upgrade-insecure-requests`, which would send a plain-HTTP page's assets to HTTPS. Swagger
 * UI sets styles inline.
 */
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'self'";

/**
 * `GET /docs`: Swagger UI showing the document, its assets bundled in @fastify/swagger-ui and
 * served from the service. The plugins are registered on the app's Fastify instance, not
 * awaited: they load when it starts, after Nest's own routes and not-found handler.
 */
@Injectable()
export class DocsPage implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Inject(OPENAPI_DOCUMENT) private readonly document: OpenApiDocument,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    void fastify.register(fastifySwagger, { mode: 'static', specification: { document: this.document as never } });
    void fastify.register(fastifySwaggerUi, {
      routePrefix: DOCS_PATH,
      staticCSP: CONTENT_SECURITY_POLICY,
      theme: { title: 'Bulkhead API' },
      uiConfig: { deepLinking: true },
    });
  }
}
