export * from './openapi.module';
export * from './openapi.module-definition';
export { buildOpenApiDocument, ROUTES, type OpenApiDocument, type OpenApiDocumentOptions } from './openapi-document';
export type { RouteDoc, RouteGroup } from './route-doc';
export { DOCS_PATH } from './docs-page';
