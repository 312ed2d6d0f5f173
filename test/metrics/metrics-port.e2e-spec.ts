import { MetricsServer } from '../../src/metrics';
import { parseConfig } from '../../src/config';
import { createTestApp, type TestApp } from '../support/create-app';
import { invoke, send } from '../support/http-client';

describe('server.metricsPort: /metrics on a port of its own', () => {
  let app: TestApp;

  afterEach(() => app?.close());

  it('serves /metrics on its own port only, with the same series, and nothing else there', async () => {
    app = await createTestApp({
      server: { metricsPort: 0 },
      lanes: { main: { concurrency: 2, queueCapacity: 2 } },
      tools: { echo: { lane: 'main', kind: 'builtin', builtin: 'echo' } },
    });
    expect((await invoke(app.url, 'echo', { a: 1 })).status).toBe(200);
    const port = app.app.get(MetricsServer).port;
    expect(port).toBeGreaterThan(0);
    const metricsUrl = `http://127.0.0.1:${port}`;

    const scraped = await send('GET', `${metricsUrl}/metrics`);
    const onApi = await send('GET', `${app.url}/metrics`);
    const elsewhere = await send('GET', `${metricsUrl}/v1/lanes`);

    expect(scraped.status).toBe(200);
    expect(scraped.headers['content-type']).toContain('text/plain; version=0.0.4');
    expect(scraped.body).toContain('bulkhead_calls_total{tool="echo",outcome="ok",transport="http"} 1');
    expect(onApi.status).toBe(404);
    expect(onApi.body.error).toMatchObject({ kind: 'not_found' });
    expect(elsewhere.status).toBe(404);
  });

  it('stops listening when the app closes', async () => {
    app = await createTestApp({ server: { metricsPort: 0 }, lanes: { main: { concurrency: 1, queueCapacity: 1 } } });
    const port = app.app.get(MetricsServer).port;
    await app.close();

    await expect(send('GET', `http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });

  it('refuses a metrics port that is the API port', () => {
    const parsed = parseConfig({ server: { port: 3000, metricsPort: 3000 }, lanes: { main: { concurrency: 1 } } }, {});
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? [] : parsed.problems).toContain('server.metricsPort: must differ from server.port');
  });
});
