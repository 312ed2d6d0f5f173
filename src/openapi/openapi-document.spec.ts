import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020';
import { isResilienceError } from '../common';
import { parseBatchRequest } from '../dispatch/batch/batch-request';
import { parseInvokeRequest } from '../dispatch/invoke-request';
import { parseChatRequest } from '../llm/chat-request';
import { buildOpenApiDocument, type OpenApiDocumentOptions, ROUTES } from './openapi-document';
import type { RouteGroup } from './route-doc';

const EVERY_GROUP: Record<RouteGroup, boolean> = {
  tools: true,
  llm: true,
  mcp: true,
  lanes: true,
  circuits: true,
  events: true,
  admin: true,
  metrics: true,
  health: true,
  docs: true,
};

function build(options: Partial<OpenApiDocumentOptions> = {}) {
  return buildOpenApiDocument({ mounted: EVERY_GROUP, allowAnonymous: false, ...options });
}

/** Whether `fn` runs without a ResilienceError. */
function accepts(fn: () => unknown): boolean {
  try {
    fn();
    return true;
  } catch (error) {
    if (!isResilienceError(error)) throw error;
    return false;
  }
}

/** Checks of values against the document's request components, by component name. */
function componentChecks(): (name: string) => (value: unknown) => boolean {
  const ajv = new Ajv2020({ strict: false });
  ajv.addSchema({ $id: 'doc', components: build().components });
  return (name) => {
    const validate = ajv.compile({ $ref: `doc#/components/schemas/${name}` });
    return (value) => validate(value) as boolean;
  };
}

describe('buildOpenApiDocument', () => {
  it.each([
    ['every route', EVERY_GROUP],
    ['only the tools and the document', { ...mapGroups(false), tools: true, docs: true }],
    ['no route at all', mapGroups(false)],
  ])('builds a valid OpenAPI 3.1 document with %s', async (_label, mounted) => {
    expect(await new Validator().validate(build({ mounted }))).toEqual({ valid: true });
  });

  it('shows the routes of the groups mounted, and no other', () => {
    const document = build({ mounted: { ...mapGroups(false), tools: true, health: true } });

    expect(Object.keys(document.paths).sort()).toEqual([
      '/health/live',
      '/health/ready',
      '/v1/tools/batch',
      '/v1/tools/{toolId}/invoke',
    ]);
  });

  it('gives every route a unique operation id and a 200 answer', () => {
    expect(new Set(ROUTES.map((route) => route.operationId)).size).toBe(ROUTES.length);
    for (const [path, operations] of Object.entries(build().paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        expect({ route: `${method} ${path}`, ok: Object.hasOwn((operation as any).responses, '200') }).toEqual({
          route: `${method} ${path}`,
          ok: true,
        });
      }
    }
  });

  it('makes the API key optional only where callers without one are let in', () => {
    const invoke = (allowAnonymous: boolean) =>
      (build({ allowAnonymous }).paths['/v1/tools/{toolId}/invoke'].post as { security: unknown }).security;

    expect(invoke(false)).toEqual([{ apiKey: [] }]);
    expect(invoke(true)).toEqual([{ apiKey: [] }, {}]);
  });

  it('gives each error status the kinds of ERROR_KINDS, with Retry-After where waiting helps', () => {
    const responses = build().components.responses as Record<string, { description: string; headers?: object }>;

    expect(responses.Error503.description).toBe(
      '`queue_full`, `queue_expired`, `circuit_open`, `stopped`, `unavailable`, `overloaded`',
    );
    expect(responses.Error413.description).toBe('`invalid_request`');
    expect(Object.keys(responses.Error429.headers ?? {})).toEqual([
      'Retry-After',
      'retry-after-ms',
      'RateLimit-Policy',
      'RateLimit',
    ]);
    expect(responses.Error404.headers).toBeUndefined();
  });

  it('gives retry-after-ms beside every Retry-After, in whole milliseconds', () => {
    const responses = build().components.responses as Record<string, { headers?: Record<string, any> }>;

    for (const status of [402, 429, 503]) {
      expect(Object.keys(responses[`Error${status}`].headers ?? {})).toEqual(
        expect.arrayContaining(['Retry-After', 'retry-after-ms']),
      );
      expect(responses[`Error${status}`].headers?.['retry-after-ms'].schema).toEqual({
        type: 'string',
        pattern: '^\\d+$',
      });
    }
  });

  it('says the API key may come as Authorization: Bearer or as x-api-key, and the admin token only as a bearer', () => {
    const schemes = build().components.securitySchemes as Record<string, { description: string }>;

    expect(schemes.apiKey.description).toContain('`x-api-key: <key>`');
    expect(schemes.adminToken.description).not.toContain('x-api-key');
  });

  it('says the error envelope carries OpenAI’s fields on every path under /v1/', () => {
    const detail = (build().components.schemas as Record<string, any>).NotFoundError;

    expect(detail.properties.type.description).toContain('/v1/');
    expect(detail.properties.code.description).toContain('/v1/');
    expect(detail.properties.param.description).toContain('/v1/');
  });

  describe('the request bodies it shows judge bodies as the routes do', () => {
    const componentCheck = componentChecks();

    it.each([
      [{ arguments: { q: 1 } }],
      [{}],
      [{ arguments: [] }],
      [{ arguments: null }],
      [{ arguments: {}, tenant: 'acme' }],
      [[]],
      ['{}'],
    ])('InvokeRequest: %j', (body) => {
      const route = accepts(() => parseInvokeRequest({ timeoutMs: 1000 }, 1000, body, {}));

      expect(componentCheck('InvokeRequest')(body)).toBe(route);
    });

    it.each([
      ['a batch with every field', { calls: [{ toolId: 'a', arguments: {}, idempotencyKey: 'k-1', callId: 'c-1' }] }],
      ['concurrency 64', { calls: [], concurrency: 64 }],
      ['concurrency 0', { calls: [], concurrency: 0 }],
      ['an extra key', { calls: [], extra: 1 }],
      ['calls as a string', { calls: 'x' }],
      ['257 calls', { calls: new Array(257).fill({ toolId: 'a' }) }],
    ])('BatchRequest: %s', (_label, body) => {
      expect(componentCheck('BatchRequest')(body)).toBe(accepts(() => parseBatchRequest(body)));
    });

    it.each([
      [{ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }],
      [{ model: 'chat', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: true }],
      [{ model: 'chat', messages: [{ role: 'user', content: 'hi' }], temperature: 0.2, user: 'u-1' }],
      [{ model: 'chat', messages: [] }],
      [{ model: '', messages: [{ role: 'user', content: 'hi' }] }],
      [{ model: 'chat', messages: [{ role: 'robot', content: 'hi' }] }],
      [{ model: 'chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 0 }],
      [{ model: 'chat', messages: [{ role: 'user', content: 'hi' }], n: 129 }],
      [{ model: 'chat', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: {} }] }],
      [{ messages: [{ role: 'user', content: 'hi' }] }],
    ])('ChatCompletionRequest: %j', (body) => {
      expect(componentCheck('ChatCompletionRequest')(body)).toBe(accepts(() => parseChatRequest(body)));
    });
  });
});

function mapGroups(value: boolean): Record<RouteGroup, boolean> {
  return Object.fromEntries(Object.keys(EVERY_GROUP).map((group) => [group, value])) as Record<RouteGroup, boolean>;
}
