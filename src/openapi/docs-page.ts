import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { type ExpressRoutes, serveDocsOnExpress } from './express-docs-page';
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

const TITLE = 'Bulkhead API';

/**
 * `GET /docs`: Swagger UI showing the document, its assets bundled in @fastify/swagger-ui and
 * served from the service. On Fastify the plugins are registered on the app's instance, not
 * awaited: they load when it starts, after Nest's own routes and not-found handler. On Express
 * the same page is served by routes of its own (`serveDocsOnExpress`), added after Nest's routes
 * and before its not-found handler.
 */
@Injectable()
export class DocsPage implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Inject(OPENAPI_DOCUMENT) private readonly document: OpenApiDocument,
  ) {}

  onModuleInit(): void {
    const adapter = this.adapterHost.httpAdapter;
    if (adapter.getType() === 'express') {
      serveDocsOnExpress(adapter.getInstance<ExpressRoutes>(), {
        path: DOCS_PATH,
        document: this.document,
        contentSecurityPolicy: CONTENT_SECURITY_POLICY,
        title: TITLE,
      });
      return;
    }
    const fastify = adapter.getInstance<FastifyInstance>();
    void fastify.register(fastifySwagger, { mode: 'static', specification: { document: this.document as never } });
    void fastify.register(fastifySwaggerUi, {
      routePrefix: DOCS_PATH,
      staticCSP: CONTENT_SECURITY_POLICY,
      theme: { title: TITLE },
      uiConfig: { deepLinking: true },
    });
  }
}
