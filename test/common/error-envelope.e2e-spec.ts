import { Lifecycle } from '../../src/lifecycle';
import { createTestApp, type TestApp } from '../support/create-app';
import { expectEnvelope, expectNothingLeaked } from '../support/envelope';
import { send } from '../support/http-client';

const INVOKE = '/v1/tools/echo/invoke';

/**
 * Every failure of every route is the envelope of docs/http-contract.md section 6, whoever refused the
 * request: our code, Nest's router or Fastify's body parsing. None shows a stack or a path.
 */
describe('the error envelope on every route', () => {
  let service: TestApp;

  beforeEach(async () => {
    service = await createTestApp({
      server: { bodyLimitBytes: 2048 },
      lanes: {
        main: { concurrency: 1, queueCapacity: 1 },
        render: { concurrency: 1, queueCapacity: 0 },
        general: { concurrency: 1, queueCapacity: 0 },
      },
      tools: { echo: { lane: 'main', kind: 'builtin', builtin: 'echo' } },
      examples: true,
    });
  });

  afterEach(() => service.close());

  describe('routing', () => {
    it('answers an unknown route with 404 not_found without echoing its path or query', async () => {
      const response = await send('GET', `${service.url}/nope-hidden-segment?token=query-secret`);

      const error = expectEnvelope(response, 404, 'not_found');
      expect(error).toEqual({ kind: 'not_found', message: 'no such route', attempts: 0, jsonrpcCode: -32601 });
      expectNothingLeaked(response, 'nope-hidden-segment', 'query-secret', 'Cannot GET');
    });

    it.each([
      ['GET', INVOKE],
      ['PUT', INVOKE],
      ['POST', '/v1/lanes'],
      ['DELETE', '/v1/events'],
      ['POST', '/metrics'],
      ['POST', '/health/live'],
    ])('answers %s %s, a known path with the wrong method, with the envelope', async (method, path) => {
      const response = await send(method, `${service.url}${path}`);

      expectEnvelope(response, 404, 'not_found');
      expectNothingLeaked(response, path);
    });
  });

  describe('URLs the router cannot read', () => {
    it.each([
      ['POST', '/v1/tools/%E0%A4%A-url-secret/invoke'],
      ['GET', '/v1/la%E0%A4%Anes-url-secret'],
    ])('answers %s %s, a malformed percent-encoding, with 400 invalid_request', async (method, path) => {
      const response = await send(method, `${service.url}${path}`);

      expect(expectEnvelope(response, 400, 'invalid_request').message).toBe('the URL is malformed');
      expectNothingLeaked(response, 'url-secret', 'FST_');
    });

    it('answers a path segment over the router limit with 400 invalid_request, not echoing it', async () => {
      const response = await send('POST', `${service.url}/v1/tools/${'a'.repeat(101)}/invoke`);

      expectEnvelope(response, 400, 'invalid_request');
      expectNothingLeaked(response, 'a'.repeat(101), 'FST_');
    });
  });

  describe('bodies', () => {
    it.each(['application/x-www-form-urlencoded', 'text/plain'])(
      'refuses a %s body, even an empty one, with 400 invalid_request',
      async (type) => {
        for (const raw of ['', 'arguments=1']) {
          const response = await send('POST', `${service.url}${INVOKE}`, { raw, headers: { 'content-type': type } });

          expect(expectEnvelope(response, 400, 'invalid_request').message).toBe(
            'content-type must be application/json',
          );
        }
      },
    );

    it('answers malformed JSON with 400 invalid_request without echoing the body', async () => {
      const response = await send('POST', `${service.url}${INVOKE}`, {
        raw: '{"arguments": {"card": "4111-body-secret"',
        headers: { 'content-type': 'application/json' },
      });

      const error = expectEnvelope(response, 400, 'invalid_request');
      expect(error).toEqual({
        kind: 'invalid_request',
        message: 'request body is not valid JSON',
        attempts: 0,
        jsonrpcCode: -32600,
      });
      expectNothingLeaked(response, '4111-body-secret', 'FST_');
    });

    it('answers an empty body with a JSON content type with 400 invalid_request', async () => {
      const response = await send('POST', `${service.url}${INVOKE}`, {
        raw: '',
        headers: { 'content-type': 'application/json' },
      });

      expectEnvelope(response, 400, 'invalid_request');
      expectNothingLeaked(response, 'FST_');
    });

    it.each([
      ['text/plain', '{"arguments":{"note":"plain-secret"}}'],
      ['application/xml', '<arguments><note>xml-secret</note></arguments>'],
      ['application/octet-stream', '{"arguments":{}}'],
    ])('answers a body of content type %s with 400 invalid_request', async (contentType, raw) => {
      const response = await send('POST', `${service.url}${INVOKE}`, { raw, headers: { 'content-type': contentType } });

      expectEnvelope(response, 400, 'invalid_request');
      expectNothingLeaked(response, 'plain-secret', 'xml-secret', contentType, 'FST_');
    });

    it('answers a body over server.bodyLimitBytes with 413 and kind invalid_request', async () => {
      const response = await send('POST', `${service.url}${INVOKE}`, {
        json: { arguments: { blob: 'b'.repeat(3000) } },
      });

      const error = expectEnvelope(response, 413, 'invalid_request');
      expect(error).toMatchObject({ jsonrpcCode: -32600, attempts: 0 });
      expectNothingLeaked(response, 'bbbbbbbb', '2048', 'FST_');
    });

    it('accepts a body just under server.bodyLimitBytes', async () => {
      const response = await send('POST', `${service.url}${INVOKE}`, {
        json: { arguments: { blob: 'b'.repeat(1900) } },
      });

      expect(response.status).toBe(200);
    });
  });

  describe('query strings', () => {
    it.each(['0', 'abc', '100000', '-1', '1.5', ''])(
      'answers GET /v1/events?limit=%s with 400 invalid_request',
      async (limit) => {
        const response = await send('GET', `${service.url}/v1/events?limit=${limit}`);

        const error = expectEnvelope(response, 400, 'invalid_request');
        expect(error.message).toBe('limit must be an integer from 1 to 1000');
      },
    );

    it('answers GET /v1/events?limit=1000, the ledger capacity, with events', async () => {
      const response = await send('GET', `${service.url}/v1/events?limit=1000`);

      expect(response.status).toBe(200);
      expect(response.body).toEqual({ events: [] });
    });
  });

  describe('other routes', () => {
    it('answers readiness while shutting down with 503 unavailable', async () => {
      await service.app.get(Lifecycle).drain();

      const response = await send('GET', `${service.url}/health/ready`);

      const error = expectEnvelope(response, 503, 'unavailable');
      expect(error).toMatchObject({ jsonrpcCode: -32012, attempts: 0 });
      expect(error.message).toContain('shutting down');
    });

    it("answers a company @Bulkhead route's own schema error with the envelope", async () => {
      const response = await send('POST', `${service.url}/v1/examples/reports/render`, { json: { ms: 'soon' } });

      const error = expectEnvelope(response, 400, 'schema');
      expect(error).toMatchObject({ jsonrpcCode: -32602, message: 'ms must be an integer from 0 to 60000' });
      expectNothingLeaked(response);
    });
  });
});
