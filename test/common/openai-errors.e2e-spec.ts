import OpenAI from 'openai';
import { createTestApp, type TestApp } from '../support/create-app';
import { JSONRPC_CODE, type ContractKind } from '../support/envelope';
import { type Response, send } from '../support/http-client';
import { ADMIN_TOKEN, testTenant } from '../support/tenants';

const ACME = testTenant('acme');

/** Keys required; an admin token; one echo tool; an LLM route with an offline target. */
const CONFIG = {
  auth: { allowAnonymous: false, apiKeys: [ACME.apiKey], adminToken: ADMIN_TOKEN },
  lanes: { main: { concurrency: 4, queueCapacity: 4 }, llm: { concurrency: 4, queueCapacity: 4 } },
  tools: { echo: { lane: 'main', kind: 'builtin', builtin: 'echo' } },
  llm: { routes: { chat: { lane: 'llm', targets: [{ provider: 'fake', model: 'offline' }] } } },
};

/** Who asks, as a test title says it: never the key itself. */
const WHO = {
  acme: ACME.headers,
  'no key': {},
  'an unknown key': { authorization: 'Bearer sk-not-a-configured-key' },
} satisfies Record<string, Record<string, string>>;
const MCP_ACCEPT = { accept: 'application/json, text/event-stream' };

type Row = [method: string, path: string, who: keyof typeof WHO, body: unknown, status: number, kind: ContractKind];

/** Failures under /v1/: known routes and unknown ones, before and after authentication. */
const UNDER_V1: Row[] = [
  ['GET', '/v1/models/nope', 'acme', undefined, 404, 'not_found'],
  ['GET', '/v1/models', 'an unknown key', undefined, 401, 'unauthorized'],
  ['GET', '/v1/files', 'no key', undefined, 404, 'not_found'],
  ['POST', '/v1/audio/speech', 'acme', { input: 'hi' }, 404, 'not_found'],
  ['POST', '/v1/embeddings', 'acme', { input: 'hi' }, 400, 'invalid_request'],
  ['POST', '/v1/tools/nope/invoke', 'acme', { arguments: {} }, 404, 'not_found'],
  ['POST', '/v1/tools/echo/invoke', 'acme', { arguments: [] }, 400, 'invalid_request'],
  ['POST', '/v1/tools/echo/invoke', 'no key', { arguments: {} }, 401, 'unauthorized'],
  ['POST', '/v1/tools/batch', 'acme', { calls: 'all' }, 400, 'invalid_request'],
  ['GET', '/v1/events?limit=0', 'acme', undefined, 400, 'invalid_request'],
  ['GET', '/v1/lanes', 'an unknown key', undefined, 401, 'unauthorized'],
  ['GET', '/v1/admin/containment/acme', 'acme', undefined, 401, 'unauthorized'],
  ['POST', '/v1/chat/completions', 'acme', { model: 'nope', messages: [] }, 400, 'invalid_request'],
];

/** Failures elsewhere: the envelope alone. */
const ELSEWHERE: Row[] = [
  ['GET', '/nope', 'acme', undefined, 404, 'not_found'],
  ['GET', '/v1', 'acme', undefined, 404, 'not_found'],
  ['GET', '/v1x/models', 'acme', undefined, 404, 'not_found'],
  ['POST', '/health/live', 'no key', undefined, 404, 'not_found'],
  ['POST', '/metrics', 'no key', undefined, 404, 'not_found'],
  ['POST', '/mcp', 'acme', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, 400, 'invalid_request'],
  ['POST', '/mcp', 'no key', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, 401, 'unauthorized'],
];

const request = (app: TestApp, [method, path, who, body]: Row): Promise<Response> =>
  send(method, `${app.url}${path}`, { headers: { ...WHO[who], ...(path === '/mcp' ? MCP_ACCEPT : {}) }, json: body });

/**
 * Every failure under `/v1/` carries OpenAI's `type`, `code` and `param` beside the envelope, so
 * an OpenAI SDK pointed at the service (`baseURL` = the service + `/v1`) reads its errors as its
 * own instead of printing raw JSON (docs/http-contract.md section 6).
 */
describe('OpenAI’s error fields on every path under /v1/', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await createTestApp(CONFIG);
  });

  afterAll(() => app.close());

  it.each(UNDER_V1)('%s %s (%s, body %j) answers %i %s with them', async (...row) => {
    const [, , , , status, kind] = row;
    const response = await request(app, row);

    expect({ status: response.status, body: response.body }).toEqual({
      status,
      body: expect.objectContaining({
        error: {
          kind,
          message: expect.any(String),
          attempts: 0,
          jsonrpcCode: JSONRPC_CODE[kind],
          type: kind,
          code: kind,
          param: null,
        },
      }),
    });
  });

  it.each(ELSEWHERE)('%s %s (%s, body %j) answers %i %s without them', async (...row) => {
    const [, , , , status, kind] = row;
    const response = await request(app, row);

    expect({ status: response.status, kind: response.body.error.kind }).toEqual({ status, kind });
    expect(Object.keys(response.body.error).sort()).toEqual(['attempts', 'jsonrpcCode', 'kind', 'message']);
  });

  describe('read by the openai SDK', () => {
    const client = (apiKey = ACME.key) => new OpenAI({ apiKey, baseURL: `${app.url}/v1`, maxRetries: 0 });

    it('throws NotFoundError with code and type for GET /v1/files, which the service does not serve', async () => {
      const failure = await client()
        .files.list()
        .catch((error: unknown) => error);

      expect(failure).toBeInstanceOf(OpenAI.NotFoundError);
      expect(failure).toMatchObject({ status: 404, code: 'not_found', type: 'not_found', param: null });
      expect((failure as Error).message).toBe('404 no such route');
    });

    it('throws NotFoundError with code and type for a model that names no route', async () => {
      const failure = await client()
        .models.retrieve('nope')
        .catch((error: unknown) => error);

      expect(failure).toBeInstanceOf(OpenAI.NotFoundError);
      expect(failure).toMatchObject({ status: 404, code: 'not_found', type: 'not_found', param: null });
      expect((failure as Error).message).toMatch(/^404 no LLM route of that name \(/);
    });

    it('throws NotFoundError with code and type for an unknown tool', async () => {
      const failure = await client()
        .post('/tools/nope/invoke', { body: { arguments: {} } })
        .catch((error: unknown) => error);

      expect(failure).toBeInstanceOf(OpenAI.NotFoundError);
      expect(failure).toMatchObject({ status: 404, code: 'not_found', type: 'not_found' });
    });

    it('throws AuthenticationError with code and type for a key that is not configured', async () => {
      const failure = await client('sk-not-a-configured-key')
        .post('/tools/echo/invoke', { body: { arguments: {} } })
        .catch((error: unknown) => error);

      expect(failure).toBeInstanceOf(OpenAI.AuthenticationError);
      expect(failure).toMatchObject({ status: 401, code: 'unauthorized', type: 'unauthorized' });
    });
  });
});
