import OpenAI from 'openai';
import { createTestApp, type TestApp } from '../support/create-app';
import { testTenant } from '../support/tenants';
import { json, Upstream } from '../support/upstream';

/**
 * When every target of a route failed, the client hears each target's failure, in the order
 * they were tried (issue 39: a local model server refused by the egress policy, then a cloud
 * target that failed, answered only with the cloud's failure). The answer keeps the last
 * failure's kind and status; the upstream's body never reaches the message.
 */
const UPSTREAM_SECRET = 'upstream-body-secret-0123456789';
const CLOUD_KEY = 'sk-cloud-provider-key-0123456789';
const ACME = testTenant('acme');

describe('a route whose every target failed', () => {
  let cloud: Upstream;
  let app: TestApp;

  beforeEach(async () => {
    cloud = await Upstream.start(json(401, { error: { message: UPSTREAM_SECRET, type: 'invalid_request_error' } }));
  });

  afterEach(async () => {
    await app?.close();
    await cloud.close();
  });

  async function start(targets: Array<Record<string, unknown>>): Promise<OpenAI> {
    app = await createTestApp({
      auth: { apiKeys: [ACME.apiKey] },
      lanes: { llm: { concurrency: 4, queueCapacity: 4 } },
      // 127.0.0.1 is open (the cloud stand-in), 127.0.0.2 (the "local model server") is not.
      containment: { egress: { allowHosts: ['*'], allowPrivateCidrs: ['127.0.0.1/32'] } },
      llm: { routes: { chat: { lane: 'llm', targets, retry: { maxAttempts: 1 } } } },
    });
    return new OpenAI({ apiKey: ACME.key, baseURL: `${app.url}/v1`, maxRetries: 0 });
  }

  const LOCAL = { provider: 'openai', model: 'llama3', baseUrl: 'http://127.0.0.2:11434/v1' };
  const CLOUD = () => ({ provider: 'openai', model: 'gpt-cloud', baseUrl: cloud.url('/v1'), apiKey: CLOUD_KEY });
  const ask = (client: OpenAI) =>
    client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });

  it("names each target's failure in order: the egress refusal first, the cloud's 401 after", async () => {
    const client = await start([LOCAL, CLOUD()]);

    const error = (await ask(client).catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.APIError>;

    expect(error).toBeInstanceOf(OpenAI.APIError);
    // The last failure's kind and status: the cloud's 401 is `unavailable`, 503.
    expect(error.status).toBe(503);
    // The SDK hands over the envelope's `error`.
    const envelope = error.error as { kind: string; message: string };
    expect(envelope.kind).toBe('unavailable');
    expect(envelope.message).toMatch(
      /^every target failed: openai\/llama3 egress_denied \(host '127\.0\.0\.2' .*containment\.egress\.allowPrivateCidrs\); openai\/gpt-cloud unavailable \(target openai\/gpt-cloud answered 401.*\)$/,
    );
    expect(JSON.stringify(envelope)).not.toContain(UPSTREAM_SECRET);
    expect(JSON.stringify(envelope)).not.toContain(CLOUD_KEY);
    expect(cloud.requests).toHaveLength(1);
  });

  it('keeps the one failure as it was when the route has one target', async () => {
    const client = await start([CLOUD()]);

    const error = (await ask(client).catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.APIError>;

    // The SDK hands over the envelope's `error`.
    const envelope = error.error as { kind: string; message: string };
    expect(envelope.kind).toBe('unavailable');
    expect(envelope.message).toMatch(/^target openai\/gpt-cloud answered 401/);
  });
});
