import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_SCHEMAS, errorStatusName, REQUEST_SCHEMAS, RESPONSE_SCHEMAS } from './components';
import {
  RETRY_AFTER_HEADER,
  RETRY_AFTER_MS_HEADER,
  RATE_LIMIT_HEADERS,
  type HeaderDoc,
  type ParameterDoc,
} from './headers';
import { componentSchemas, inlineSchema, type JsonSchema } from './json-schema';
import type { BodySchema, RouteAuth, RouteDoc, RouteGroup } from './route-doc';
import { ADMIN_ROUTES } from './routes/admin.routes';
import { INTROSPECTION_ROUTES } from './routes/introspection.routes';
import { LLM_ROUTES } from './routes/llm.routes';
import { MCP_ROUTES } from './routes/mcp.routes';
import { SERVICE_ROUTES } from './routes/service.routes';
import { TOOL_ROUTES } from './routes/tools.routes';
import { KINDS_BY_STATUS } from './schemas/error-envelope.schema';

/** Every route of the service, in the order of the contract's table. */
export const ROUTES: readonly RouteDoc[] = [
  ...TOOL_ROUTES,
  ...INTROSPECTION_ROUTES,
  ...ADMIN_ROUTES,
  ...SERVICE_ROUTES,
  ...LLM_ROUTES,
  ...MCP_ROUTES,
];

/** An OpenAPI 3.1 document, as JSON. */
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description: string };
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, Record<string, unknown>>;
  [field: string]: unknown;
}

export interface OpenApiDocumentOptions {
  /** The route groups the app mounts; the document shows these and no others. */
  mounted: Record<RouteGroup, boolean>;
  /** Callers without an API key are let in as `anonymous`: the key is then optional. */
  allowAnonymous: boolean;
}

/** Statuses whose answer has `Retry-After` and `retry-after-ms` where waiting helps. */
const RETRY_AFTER_STATUSES = new Set([402, 429, 503]);

/**
 * The OpenAPI document of the routes the app mounts, from the schemas they validate with
 * (requests) and answer with (responses, the error envelope of every kind).
 */
export function buildOpenApiDocument(options: OpenApiDocumentOptions): OpenApiDocument {
  const routes = ROUTES.filter((route) => options.mounted[route.group]);
  const paths: OpenApiDocument['paths'] = {};
  for (const route of routes) {
    paths[route.path] = { ...paths[route.path], [route.method]: operation(route, options) };
  }
  const document: OpenApiDocument = {
    openapi: '3.1.0',
    info: {
      title: 'Bulkhead',
      version: packageVersion(),
      description:
        "A resilience gateway for AI agents' tool and model calls. Every failure of every route answers with " +
        'the error envelope; its `kind` says what happened (docs/http-contract.md).',
    },
    tags: [
      { name: 'tools', description: 'Tool calls through the pipeline.' },
      { name: 'llm', description: 'The OpenAI-compatible LLM route.' },
      { name: 'mcp', description: 'The tools over the Model Context Protocol (Streamable HTTP).' },
      { name: 'introspection', description: 'What an API-key caller may read.' },
      { name: 'admin', description: 'Operators, with the admin token.' },
      { name: 'service', description: 'Health, metrics and this document.' },
    ],
    paths,
    components: {
      schemas: {
        ...componentSchemas(REQUEST_SCHEMAS, 'input'),
        ...componentSchemas({ ...RESPONSE_SCHEMAS, ...ERROR_SCHEMAS }, 'output'),
      },
      responses: errorResponses(),
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API key of `auth.apiKeys`; it names the tenant the call runs for. Sent as `Authorization: Bearer ' +
            "<key>`, or as `x-api-key: <key>` (what Anthropic's SDK sends); both headers with different keys are " +
            '`401 unauthorized`.',
        },
        adminToken: {
          type: 'http',
          scheme: 'bearer',
          description: '`auth.adminToken`, for `/v1/admin/...`: as `Authorization: Bearer <token>` only.',
        },
      },
    },
  };
  // Plain JSON: the fields left undefined above are gone, as they would be on the wire.
  return JSON.parse(JSON.stringify(document)) as OpenApiDocument;
}

function operation(route: RouteDoc, options: OpenApiDocumentOptions): Record<string, unknown> {
  const responses: Record<string, unknown> = {
    '200': {
      description: route.answer.description,
      headers: route.answer.headers && headers(route.answer.headers),
      content: Object.fromEntries(
        Object.entries(route.answer.content).map(([type, schema]) => [type, { schema: bodySchema(schema) }]),
      ),
    },
  };
  const errorResponse = (status: number) => (route.anthropicErrors ? 'AnthropicError' : errorStatusName(status));
  for (const status of route.errors)
    responses[String(status)] = { $ref: `#/components/responses/${errorResponse(status)}` };
  responses.default = { $ref: `#/components/responses/${route.anthropicErrors ? 'AnthropicError' : 'Error'}` };
  return {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    description: route.description,
    security: security(route.auth, options.allowAnonymous),
    parameters: route.parameters?.map(parameter),
    requestBody: route.body && {
      required: route.body.required,
      description: route.body.description,
      content: { 'application/json': { schema: { $ref: `#/components/schemas/${route.body.schema}` } } },
    },
    responses,
  };
}

function security(auth: RouteAuth, allowAnonymous: boolean): Array<Record<string, string[]>> {
  if (auth === 'none') return [];
  if (auth === 'admin') return [{ adminToken: [] }];
  // An empty requirement makes the key optional, as `auth.allowAnonymous` does.
  return allowAnonymous ? [{ apiKey: [] }, {}] : [{ apiKey: [] }];
}

function parameter(doc: ParameterDoc): Record<string, unknown> {
  return {
    name: doc.name,
    in: doc.in,
    required: doc.required ?? false,
    description: doc.description,
    schema: inlineSchema(doc.schema, 'input'),
  };
}

function headers(docs: Record<string, HeaderDoc>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(docs).map(([name, doc]) => [
      name,
      { description: doc.description, schema: inlineSchema(doc.schema, 'output') },
    ]),
  );
}

function bodySchema(schema: BodySchema<string>): JsonSchema {
  return typeof schema === 'string' ? { $ref: `#/components/schemas/${schema}` } : inlineSchema(schema, 'output');
}

/** `#/components/responses`: `Error` (any kind) and one per status, with the headers that come with it. */
function errorResponses(): Record<string, unknown> {
  const responses: Record<string, unknown> = {
    Error: {
      description: 'The error envelope, any kind (protocol-level refusals: 408, 417, 431 `invalid_request`).',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
    },
    AnthropicError: {
      description:
        "A failure in Anthropic's shape, the envelope's fields inside `error`: for Anthropic's clients " +
        '(`/v1/messages...`, or any request with `anthropic-version`). Overloaded is 529, a failure behind it 500.',
      headers: headers({ 'Retry-After': RETRY_AFTER_HEADER, 'retry-after-ms': RETRY_AFTER_MS_HEADER }),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/AnthropicError' } } },
    },
  };
  for (const [status, kinds] of KINDS_BY_STATUS) {
    const extra: Record<string, HeaderDoc> = {};
    if (RETRY_AFTER_STATUSES.has(status)) {
      extra['Retry-After'] = RETRY_AFTER_HEADER;
      extra['retry-after-ms'] = RETRY_AFTER_MS_HEADER;
    }
    if (status === 429) Object.assign(extra, RATE_LIMIT_HEADERS);
    responses[errorStatusName(status)] = {
      description: kinds.map((kind) => `\`${kind}\``).join(', '),
      headers: Object.keys(extra).length > 0 ? headers(extra) : undefined,
      content: { 'application/json': { schema: { $ref: `#/components/schemas/${errorStatusName(status)}` } } },
    };
  }
  return responses;
}

/** The package's version, from its package.json (two levels up from src/openapi and dist/openapi alike). */
function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
  return manifest.version;
}
