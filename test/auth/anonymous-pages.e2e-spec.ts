import { createTestApp, type TestApp } from '../support/create-app';
import { expectEnvelope } from '../support/envelope';
import { invoke, send } from '../support/http-client';
import { testTenant } from '../support/tenants';

const ACME = testTenant('acme');
const EVIL = 'http://evil.example.com';

/**
 * With `auth.allowAnonymous` (the shipped config) a route needs no key, so a web page can call it,
 * a DNS-rebinding page included: `Host` and `Origin` both name the attacker, and the browser sends
 * no preflight for what it thinks is same-origin. Such a caller is refused; agents, SDKs and curl
 * (no `Origin`), loopback pages and callers with a key are not.
 */
describe('anonymous callers from web pages', () => {
  let app: TestApp;

  async function start(auth: Record<string, unknown> = {}) {
    app = await createTestApp({
      auth: { allowAnonymous: true, apiKeys: [ACME.apiKey], ...auth },
      lanes: { main: { concurrency: 2, queueCapacity: 2 } },
      tools: { echo: { lane: 'main', kind: 'builtin', builtin: 'echo' } },
      llm: { routes: { demo: { lane: 'main', targets: [{ provider: 'fake', model: 'fake-echo' }] } } },
    });
  }

  afterEach(async () => {
    await app?.close();
  });

  const CHAT = { model: 'demo', messages: [{ role: 'user', content: 'hello' }] };

  it('refuses a rebinding page, Host and Origin both its own, on the tool and the LLM routes: 403', async () => {
    await start();
    const page = { origin: EVIL, host: 'evil.example.com:3000' };

    const tool = await invoke(app.url, 'echo', { q: 1 }, page);
    const chat = await send('POST', `${app.url}/v1/chat/completions`, { json: CHAT, headers: page });

    expect(expectEnvelope(tool, 403, 'invalid_request').message).toBe(
      'the request comes from a web page whose origin is not allowed',
    );
    expectEnvelope(chat, 403, 'invalid_request');
  });

  it('serves callers with no Origin, loopback pages, listed pages and callers with a key', async () => {
    await start({ allowedOrigins: ['https://console.example.com'] });

    expect((await invoke(app.url, 'echo', { q: 1 })).status).toBe(200);
    expect((await invoke(app.url, 'echo', { q: 1 }, { origin: 'http://localhost:5173' })).status).toBe(200);
    expect((await invoke(app.url, 'echo', { q: 1 }, { origin: 'https://console.example.com' })).status).toBe(200);
    expect((await invoke(app.url, 'echo', { q: 1 }, { origin: EVIL, ...ACME.headers })).status).toBe(200);
  });

  it('refuses an anonymous caller naming a Host not listed, once auth.allowedHosts lists some', async () => {
    await start({ allowedHosts: ['bulkhead.internal'] });

    expectEnvelope(await invoke(app.url, 'echo', { q: 1 }, { host: 'evil.example.com' }), 403, 'invalid_request');
    expect((await invoke(app.url, 'echo', { q: 1 }, { host: 'bulkhead.internal:3000' })).status).toBe(200);
  });
});
