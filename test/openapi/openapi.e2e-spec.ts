import { Validator } from '@seriousme/openapi-schema-validator';
import { request as undiciRequest } from 'undici';
import type { OpenApiDocument } from '../../src/openapi';
import { createTestApp, type TestApp } from '../support/create-app';
import { expectEnvelope } from '../support/envelope';
import { type Response, send } from '../support/http-client';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { UpstreamMcpServer } from '../mcp/upstream-mcp-server';
import { DocumentAnswers, documentedRoutes, servedRoutes } from './document-answers';

const ACME = testTenant('acme');
/** A tenant with one request per minute. */
const RATED = testTenant('rated');
/** A tenant whose budget cannot pay for one `paid` call. */
const POOR = testTenant('poor');

const CONFIG = {
  auth: { apiKeys: [ACME.apiKey, RATED.apiKey, POOR.apiKey], adminToken: ADMIN_TOKEN },
  lanes: { main: { concurrency: 4, queueCapacity: 4 }, llm: { concurrency: 4, queueCapacity: 4 } },
  tools: {
    echo: { lane: 'main', kind: 'builtin', builtin: 'echo' },
    paid: { lane: 'main', kind: 'builtin', builtin: 'echo', costUsd: 1 },
  },
  budgets: { tenants: { poor: 0.5 } },
  rateLimits: { tenants: { rated: { rpm: 1 } } },
  llm: {
    routes: { chat: { lane: 'llm', targets: [{ provider: 'fake', model: 'echo' }] } },
    prices: { 'fake/echo': { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
  },
};

const CHAT = { model: 'chat', messages: [{ role: 'user', content: 'hello there' }] };

/** The document as the app serves it. */
async function documentOf(app: TestApp): Promise<OpenApiDocument> {
  const response = await send('GET', `${app.url}/openapi.json`);
  expect(response.status).toBe(200);
  return response.body as OpenApiDocument;
}

describe('the OpenAPI document and its page', () => {
  let app: TestApp;
  let document: OpenApiDocument;
  let answers: DocumentAnswers;
  /** `METHOD /path` of each documented operation whose 200 answer was checked. */
  const checkedOk = new Set<string>();

  /** The upstream of `pinned`, an MCP tool (its pin has admin routes). */
  let upstream: UpstreamMcpServer;

  beforeAll(async () => {
    upstream = await UpstreamMcpServer.start();
    const pinned = { lane: 'main', kind: 'mcp', url: upstream.url, tool: 'echo' };
    app = await createTestApp({ ...CONFIG, tools: { ...CONFIG.tools, pinned } });
    document = await documentOf(app);
    answers = new DocumentAnswers(document);
  });

  afterAll(async () => {
    await app.close();
    await upstream.close();
  });

  /** Calls a route and checks that its answer is what the document says for its status. */
  async function call(
    method: string,
    path: string,
    template: string,
    options: { json?: unknown; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    const response = await send(method, `${app.url}${path}`, options);
    expect({ route: `${method} ${template}`, problems: answers.problems(method, template, response) }).toEqual({
      route: `${method} ${template}`,
      problems: [],
    });
    if (response.status === 200) checkedOk.add(`${method} ${template}`);
    return response;
  }

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(document);

    expect(result).toEqual({ valid: true });
    expect(document.openapi).toBe('3.1.0');
  });

  it('documents every route the app mounts, and no other', () => {
    const served = servedRoutes(app.app.getHttpAdapter().getInstance().printRoutes({ commonPrefix: false }));
    // The page's own scripts, styles and copy of the document are part of `GET /docs`.
    const page = served.filter((route) => route.startsWith('GET /docs/'));

    expect(served.filter((route) => !page.includes(route))).toEqual(documentedRoutes(document));
    expect(page.length).toBeGreaterThan(0);
  });

  it('shows every error kind, each under its status', () => {
    const schemas = document.components.schemas as Record<string, { properties?: Record<string, unknown> }>;
    const kinds = Object.values(schemas)
      .map((schema) => (schema.properties?.kind as { const?: string } | undefined)?.const)
      .filter((kind) => kind !== undefined)
      .sort();

    expect(kinds).toEqual(
      [
        'budget_exceeded',
        'circuit_open',
        'contained',
        'egress_denied',
        'idempotency_conflict',
        'internal',
        'invalid_request',
        'not_found',
        'overloaded',
        'queue_expired',
        'queue_full',
        'rate_limited',
        'schema',
        'stopped',
        'timeout',
        'tool_changed',
        'transient',
        'unauthorized',
        'unavailable',
      ].sort(),
    );
    expect(Object.keys(document.components.responses).sort()).toEqual(
      [
        'Error',
        'AnthropicError',
        ...[400, 401, 402, 403, 404, 409, 413, 422, 429, 500, 502, 503, 504].map((status) => `Error${status}`),
      ].sort(),
    );
  });

  it('asks for an API key on tenant routes, the admin token on admin routes, and nothing elsewhere', () => {
    const security = (path: string, method: string) => document.paths[path][method] as { security: unknown };

    // The test config lets callers without a key in: the key is optional there.
    expect(security('/v1/tools/{toolId}/invoke', 'post').security).toEqual([{ apiKey: [] }, {}]);
    expect(security('/v1/admin/budgets/{tenant}', 'get').security).toEqual([{ adminToken: [] }]);
    expect(security('/health/ready', 'get').security).toEqual([]);
    expect(security('/openapi.json', 'get').security).toEqual([]);
  });

  describe('real answers match their schemas', () => {
    it('POST /v1/tools/{toolId}/invoke: success and its refusals', async () => {
      const invoke = '/v1/tools/{toolId}/invoke';
      const ok = await call('POST', '/v1/tools/echo/invoke', invoke, {
        json: { arguments: { q: 1 } },
        headers: ACME.headers,
      });
      expect(ok.status).toBe(200);

      expectEnvelope(
        await call('POST', '/v1/tools/echo/invoke', invoke, { json: { args: {} } }),
        400,
        'invalid_request',
      );
      expectEnvelope(
        await call('POST', '/v1/tools/echo/invoke', invoke, { json: {}, headers: { authorization: 'Bearer nope' } }),
        401,
        'unauthorized',
      );
      expectEnvelope(await call('POST', '/v1/tools/nope/invoke', invoke, { json: {} }), 404, 'not_found');
      expectEnvelope(
        await call('POST', '/v1/tools/paid/invoke', invoke, { json: {}, headers: POOR.headers }),
        402,
        'budget_exceeded',
      );
      await call('POST', '/v1/tools/echo/invoke', invoke, { json: {}, headers: RATED.headers });
      expectEnvelope(
        await call('POST', '/v1/tools/echo/invoke', invoke, { json: {}, headers: RATED.headers }),
        429,
        'rate_limited',
      );
      const keyed = { ...ACME.headers, 'idempotency-key': 'openapi-1' };
      await call('POST', '/v1/tools/echo/invoke', invoke, { json: { arguments: { n: 1 } }, headers: keyed });
      expectEnvelope(
        await call('POST', '/v1/tools/echo/invoke', invoke, { json: { arguments: { n: 2 } }, headers: keyed }),
        422,
        'idempotency_conflict',
      );
    });

    it('an open circuit: 503 circuit_open, and the admin routes that open and close it', async () => {
      const opened = await call('POST', '/v1/admin/circuits/echo/open', '/v1/admin/circuits/{name}/open', {
        headers: AS_ADMIN,
      });
      expect(opened.body).toMatchObject({ circuit: 'echo', state: 'open' });

      const refused = await call('POST', '/v1/tools/echo/invoke', '/v1/tools/{toolId}/invoke', {
        json: {},
        headers: ACME.headers,
      });
      expectEnvelope(refused, 503, 'circuit_open');

      const closed = await call('POST', '/v1/admin/circuits/echo/close', '/v1/admin/circuits/{name}/close', {
        headers: AS_ADMIN,
      });
      expect(closed.body).toMatchObject({ circuit: 'echo', state: 'closed' });
      expectEnvelope(
        await call('POST', '/v1/admin/circuits/nope/close', '/v1/admin/circuits/{name}/close', { headers: AS_ADMIN }),
        404,
        'not_found',
      );
    });

    it('POST /v1/tools/batch: results that are success bodies and envelopes, and a malformed batch', async () => {
      const response = await call('POST', '/v1/tools/batch', '/v1/tools/batch', {
        json: {
          calls: [
            { toolId: 'echo', arguments: { n: 1 } },
            { toolId: 'nope' },
            { toolId: 'echo', arguments: [] },
            { toolId: 'paid', callId: 'poor-1' },
          ],
        },
        headers: POOR.headers,
      });
      expect(response.body.results.map((result: { error?: { kind: string } }) => result.error?.kind)).toEqual([
        undefined,
        'not_found',
        'invalid_request',
        'budget_exceeded',
      ]);

      expectEnvelope(
        await call('POST', '/v1/tools/batch', '/v1/tools/batch', { json: { calls: 'x' } }),
        400,
        'invalid_request',
      );
    });

    it('the introspection routes', async () => {
      await call('GET', '/v1/lanes', '/v1/lanes', { headers: ACME.headers });
      await call('GET', '/v1/circuits', '/v1/circuits', { headers: ACME.headers });
      const events = await call('GET', '/v1/events?limit=5', '/v1/events', { headers: ACME.headers });
      expect(events.body.events.length).toBeGreaterThan(0);
      expectEnvelope(
        await call('GET', '/v1/events?limit=0', '/v1/events', { headers: ACME.headers }),
        400,
        'invalid_request',
      );
      await call('GET', '/v1/admin/circuits', '/v1/admin/circuits', { headers: AS_ADMIN });
      await call('GET', '/v1/admin/events?limit=5', '/v1/admin/events', { headers: AS_ADMIN });
      expectEnvelope(
        await call('GET', '/v1/admin/events', '/v1/admin/events', { headers: ACME.headers }),
        401,
        'unauthorized',
      );
    });

    it('the containment and budget admin routes', async () => {
      const containment = '/v1/admin/containment/{tenant}';
      expectEnvelope(
        await call('GET', '/v1/admin/containment/nobody', containment, { headers: AS_ADMIN }),
        404,
        'not_found',
      );
      await call('PUT', '/v1/admin/containment/acme', containment, {
        json: { state: 'released', reason: 'checked' },
        headers: AS_ADMIN,
      });
      await call('GET', '/v1/admin/containment/acme', containment, { headers: AS_ADMIN });
      expectEnvelope(
        await call('PUT', '/v1/admin/containment/acme', containment, { json: { state: 'maybe' }, headers: AS_ADMIN }),
        400,
        'invalid_request',
      );
      expectEnvelope(await call('GET', '/v1/admin/containment/acme', containment), 401, 'unauthorized');

      await call('GET', '/v1/admin/budgets/poor', '/v1/admin/budgets/{tenant}', { headers: AS_ADMIN });
      await call('GET', '/v1/admin/budgets/acme', '/v1/admin/budgets/{tenant}', { headers: AS_ADMIN });
    });

    it('/v1/admin/mcp/tools/{name}: a pin, its approval, and their refusals', async () => {
      const pin = '/v1/admin/mcp/tools/{name}';
      const approve = '/v1/admin/mcp/tools/{name}/approve';
      const read = await call('GET', '/v1/admin/mcp/tools/pinned', pin, { headers: AS_ADMIN });
      expect(read.body).toMatchObject({ tool: 'pinned', pinning: 'enforce', state: 'approved' });
      const approved = await call('POST', '/v1/admin/mcp/tools/pinned/approve', approve, { headers: AS_ADMIN });
      expect(approved.body).toMatchObject({ tool: 'pinned', approved: false, changes: {} });

      expectEnvelope(await call('GET', '/v1/admin/mcp/tools/echo', pin, { headers: AS_ADMIN }), 404, 'not_found');
      expectEnvelope(await call('POST', '/v1/admin/mcp/tools/pinned/approve', approve), 401, 'unauthorized');
      const stale = await call('POST', '/v1/admin/mcp/tools/pinned/approve', approve, {
        headers: AS_ADMIN,
        json: { sha256: '0'.repeat(64) },
      });
      expectEnvelope(stale, 409, 'tool_changed');
    });

    it('POST /v1/chat/completions: the JSON answer, the stream, and refusals with OpenAI fields', async () => {
      const chat = '/v1/chat/completions';
      const answer = await call('POST', chat, chat, { json: CHAT, headers: ACME.headers });
      expect(answer.body).toMatchObject({ object: 'chat.completion', bulkhead: { servedBy: 'fake/echo' } });

      const stream = await call('POST', chat, chat, {
        json: {
          model: 'chat',
          messages: [{ role: 'user', content: 'a streamed answer, please' }],
          stream: true,
          stream_options: { include_usage: true },
        },
        headers: ACME.headers,
      });
      expect(String(stream.headers['content-type'])).toMatch(/^text\/event-stream/);
      const events = (stream.body as string).split('\n\n').filter((event) => event.startsWith('data: '));
      expect(events.at(-1)).toBe('data: [DONE]');
      const chunks = events.slice(0, -1).map((event) => JSON.parse(event.slice('data: '.length)) as unknown);
      expect(chunks.length).toBeGreaterThan(1);
      for (const chunk of chunks) expect(answers.componentProblems('ChatCompletionChunk', chunk)).toEqual([]);
      expect(chunks.at(-1)).toMatchObject({ choices: [], bulkhead: { servedBy: 'fake/echo' } });

      const unknown = await call('POST', chat, chat, { json: { ...CHAT, model: 'nope' }, headers: ACME.headers });
      expect(unknown).toMatchObject({ status: 404, body: { error: { kind: 'not_found', type: 'not_found' } } });
      const invalid = await call('POST', chat, chat, { json: { model: 'chat' }, headers: ACME.headers });
      expect(invalid).toMatchObject({ status: 400, body: { error: { kind: 'invalid_request', param: null } } });
    });

    it('POST /v1/embeddings: floats, base64, and refusals with OpenAI fields', async () => {
      const embeddings = '/v1/embeddings';
      const floats = await call('POST', embeddings, embeddings, {
        json: { model: 'chat', input: ['one', 'two'] },
        headers: ACME.headers,
      });
      expect(floats.body).toMatchObject({ object: 'list', data: [{ index: 0 }, { index: 1 }] });
      const base64 = await call('POST', embeddings, embeddings, {
        json: { model: 'chat', input: 'one', encoding_format: 'base64' },
        headers: ACME.headers,
      });
      expect(typeof base64.body.data[0].embedding).toBe('string');
      const invalid = await call('POST', embeddings, embeddings, { json: { model: 'chat' }, headers: ACME.headers });
      expect(invalid).toMatchObject({ status: 400, body: { error: { kind: 'invalid_request', param: null } } });
    });

    it("GET /v1/models in OpenAI's shape and Anthropic's, and one model", async () => {
      const anthropic = { ...ACME.headers, 'anthropic-version': '2023-06-01' };
      const list = await call('GET', '/v1/models', '/v1/models', { headers: ACME.headers });
      expect(list.body).toMatchObject({ object: 'list', data: [{ id: 'chat' }] });
      const page = await call('GET', '/v1/models?limit=1', '/v1/models', { headers: anthropic });
      expect(page.body).toMatchObject({ data: [{ type: 'model', id: 'chat' }], has_more: false });
      await call('GET', '/v1/models/chat', '/v1/models/{id}', { headers: ACME.headers });
      await call('GET', '/v1/models/chat', '/v1/models/{id}', { headers: anthropic });
      expectEnvelope(
        await call('GET', '/v1/models/nope', '/v1/models/{id}', { headers: ACME.headers }),
        404,
        'not_found',
      );
    });

    it("POST /v1/messages and its token count: the JSON answer, the stream, and refusals in Anthropic's shape", async () => {
      const messages = '/v1/messages';
      const anthropic = { ...ACME.headers, 'anthropic-version': '2023-06-01' };
      const ask = { model: 'chat', max_tokens: 50, messages: [{ role: 'user', content: 'hello' }] };
      const answer = await call('POST', messages, messages, { json: ask, headers: anthropic });
      expect(answer.body).toMatchObject({ type: 'message', bulkhead: { servedBy: 'fake/echo' } });
      const stream = await call('POST', messages, messages, { json: { ...ask, stream: true }, headers: anthropic });
      expect(String(stream.headers['content-type'])).toMatch(/^text\/event-stream/);
      expect(stream.body as string).toMatch(/^event: message_start\n/);
      expect(stream.body as string).toMatch(/event: message_stop\ndata: \{"type":"message_stop"\}\n\n$/);

      const unknown = await call('POST', messages, messages, { json: { ...ask, model: 'nope' }, headers: anthropic });
      expect(unknown).toMatchObject({ status: 404, body: { type: 'error', error: { type: 'not_found_error' } } });
      const invalid = await call('POST', messages, messages, { json: { model: 'chat' }, headers: anthropic });
      expect(invalid).toMatchObject({ status: 400, body: { error: { type: 'invalid_request_error' } } });

      const count = '/v1/messages/count_tokens';
      const counted = await call('POST', count, count, {
        json: { model: 'chat', messages: ask.messages },
        headers: anthropic,
      });
      expect(counted.body).toEqual({ input_tokens: expect.any(Number) });
      const uncounted = await call('POST', count, count, {
        json: { model: 'nope', messages: ask.messages },
        headers: anthropic,
      });
      expect(uncounted).toMatchObject({ status: 404, body: { error: { type: 'not_found_error' } } });
    });

    it('POST /v1/responses: the JSON answer, the stream, and refusals with OpenAI fields', async () => {
      const responses = '/v1/responses';
      const answer = await call('POST', responses, responses, {
        json: { model: 'chat', input: 'hello' },
        headers: ACME.headers,
      });
      expect(answer.body).toMatchObject({ object: 'response', bulkhead: { servedBy: 'fake/echo' } });
      const stream = await call('POST', responses, responses, {
        json: { model: 'chat', input: 'hello', stream: true },
        headers: ACME.headers,
      });
      expect(String(stream.headers['content-type'])).toMatch(/^text\/event-stream/);
      expect(stream.body as string).toMatch(/^event: response\.created\n/);
      const stored = await call('POST', responses, responses, {
        json: { model: 'chat', input: 'hello', previous_response_id: 'resp_1' },
        headers: ACME.headers,
      });
      expect(stored).toMatchObject({
        status: 400,
        body: {
          error: { kind: 'invalid_request', code: 'previous_response_not_found', param: 'previous_response_id' },
        },
      });
    });

    it('/mcp: an initialize answered as an event stream, its refusals, the session’s stream and its end', async () => {
      const mcp = '/mcp';
      const accept = { ...ACME.headers, accept: 'application/json, text/event-stream' };
      const initialize = {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'openapi', version: '1' } },
      };
      const opened = await call('POST', mcp, mcp, { json: initialize, headers: accept });
      expect(String(opened.headers['content-type'])).toMatch(/^text\/event-stream/);
      const session = String(opened.headers['mcp-session-id']);
      const onSession = { ...accept, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
      const listTools = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
      expectEnvelope(
        await call('POST', mcp, mcp, { json: listTools, headers: { ...onSession, 'mcp-session-id': 'nope' } }),
        404,
        'not_found',
      );
      expectEnvelope(await call('POST', mcp, mcp, { json: listTools, headers: accept }), 400, 'invalid_request');

      // The session's own stream stays open until the session ends.
      const listening = await undiciRequest(`${app.url}${mcp}`, {
        method: 'GET',
        headers: { ...onSession, accept: 'text/event-stream' },
      });
      await call('DELETE', mcp, mcp, { headers: { ...ACME.headers, 'mcp-session-id': session } });
      const stream: Response = {
        status: listening.statusCode,
        headers: listening.headers as Response['headers'],
        body: await listening.body.text(),
      };
      expect(answers.problems('GET', mcp, stream)).toEqual([]);
      expect(stream.status).toBe(200);
      checkedOk.add(`GET ${mcp}`);
    });

    it('health, metrics, the document and the page', async () => {
      await call('GET', '/health/live', '/health/live');
      await call('GET', '/health/ready', '/health/ready');
      const metrics = await call('GET', '/metrics', '/metrics');
      expect(metrics.body).toMatch(/^# HELP /m);
      await call('GET', '/openapi.json', '/openapi.json');
      await call('GET', '/docs', '/docs');
    });

    it('has checked a 200 answer of every documented operation', () => {
      const documented = documentedRoutes(document).map((route) => route.replace(/:(\w+)/g, '{$1}'));

      expect([...checkedOk].sort()).toEqual(documented.sort());
    });
  });

  describe('GET /docs', () => {
    it('answers a page whose scripts and styles all come from the service, and each loads', async () => {
      const page = await send('GET', `${app.url}/docs`);
      expect(page.status).toBe(200);
      expect(String(page.headers['content-type'])).toMatch(/^text\/html/);

      const assets = [...(page.body as string).matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
      expect(assets.length).toBeGreaterThanOrEqual(5);
      for (const asset of assets) {
        expect(asset).toMatch(/^\/docs\/static\/[\w.-]+$/);
        const loaded = await send('GET', `${app.url}${asset}`);
        expect({ asset, status: loaded.status }).toEqual({ asset, status: 200 });
      }
      const initializer = await send('GET', `${app.url}/docs/static/swagger-initializer.js`);
      // It loads the document from the service too, and asks no outside validator about it.
      expect(initializer.body).toContain("url: resolveUrl('./json')");
      expect(initializer.body).toContain('validatorUrl: null');
      expect(String(page.headers['content-security-policy'])).toMatch(/default-src 'self'/);
    });

    it('shows the same document as /openapi.json', async () => {
      expect((await send('GET', `${app.url}/docs/json`)).body).toEqual(document);
    });

    it('answers an asset it does not have with the error envelope', async () => {
      expectEnvelope(await send('GET', `${app.url}/docs/static/nope.js`), 404, 'not_found');
    });
  });
});

describe('the OpenAPI document of an app that requires API keys and mounts some routes', () => {
  let app: TestApp | undefined;

  afterEach(() => app?.close());

  it('needs no key itself, and makes the key required on tenant routes', async () => {
    app = await createTestApp({ ...CONFIG, auth: { ...CONFIG.auth, allowAnonymous: false } });

    const document = await documentOf(app);

    expect((await send('GET', `${app.url}/docs`)).status).toBe(200);
    expect((document.paths['/v1/lanes'].get as { security: unknown }).security).toEqual([{ apiKey: [] }]);
    expect((await send('GET', `${app.url}/v1/lanes`)).status).toBe(401);
  });
});
