import { createServiceLogger } from '../../src/logging';
import { CapturedLog } from '../support/captured-log';
import { createTestApp, type TestApp } from '../support/create-app';
import { type Deferred } from '../support/deferred';
import { eventually } from '../support/eventually';
import { send } from '../support/http-client';
import { openaiAnswer } from '../support/llm-answers';
import { parsePromText, sampleValue } from '../support/prom-text';
import { testTenant } from '../support/tenants';
import { heldIn, json, Upstream } from '../support/upstream';

// A least-busy route over two deployments of one model on loopback, one slower than the other.
// Speed is the test's to decide: each upstream holds its requests until the test releases them,
// so "the fast one answers first" is an order of events, not a race of timers.

const ACME = testTenant('acme');

describe('a least-busy route over two deployments of different speed', () => {
  let fast: Upstream;
  let slow: Upstream;
  const fastGates: Array<Deferred<void>> = [];
  const slowGates: Array<Deferred<void>> = [];
  let app: TestApp;
  let log: CapturedLog;

  beforeEach(async () => {
    fastGates.length = 0;
    slowGates.length = 0;
    fast = await Upstream.start(heldIn(fastGates, json(200, openaiAnswer('from fast', undefined, 'gpt-fast'))));
    slow = await Upstream.start(heldIn(slowGates, json(200, openaiAnswer('from slow', undefined, 'gpt-slow'))));
    log = new CapturedLog();
    app = await createTestApp(
      {
        auth: { apiKeys: [ACME.apiKey] },
        lanes: { llm: { concurrency: 16, queueCapacity: 16 } },
        llm: {
          routes: {
            chat: {
              lane: 'llm',
              strategy: 'least-busy',
              targets: [
                // The slow one first: position gives it nothing.
                { provider: 'openai', model: 'gpt-slow', baseUrl: slow.url('/v1') },
                { provider: 'openai', model: 'gpt-fast', baseUrl: fast.url('/v1') },
              ],
              cache: false,
            },
          },
        },
      },
      // Debug: a line for every request, successes included.
      { logger: createServiceLogger({ level: 'debug', destination: log }) },
    );
  });

  afterEach(async () => {
    for (const gate of [...fastGates, ...slowGates]) gate.resolve();
    await app?.close();
    await fast.close();
    await slow.close();
  });

  const ask = (text: string) =>
    send('POST', `${app.url}/v1/chat/completions`, {
      headers: { authorization: `Bearer ${ACME.key}` },
      json: { model: 'chat', messages: [{ role: 'user', content: text }] },
    });

  it('sends two requests at once to one deployment each, then more to the one that frees up sooner', async () => {
    const first = ask('one');
    const second = ask('two');
    // Whichever chose first, the other saw it busy: one request at each deployment.
    await eventually(() => {
      expect(fast.requests).toHaveLength(1);
      expect(slow.requests).toHaveLength(1);
    });

    // The fast deployment answers; the slow one still holds its request.
    fastGates[0].resolve();
    const answered = await Promise.race([first, second]);
    expect(answered.status).toBe(200);
    expect(answered.headers['x-bulkhead-served-by']).toBe('openai/gpt-fast');

    // Each new request goes where nothing is in flight: the fast deployment, again and again.
    for (let index = 0; index < 3; index++) {
      const next = ask(`more ${index}`);
      await eventually(() => expect(fast.requests).toHaveLength(2 + index));
      fastGates[1 + index].resolve();
      expect((await next).status).toBe(200);
    }
    expect(slow.requests).toHaveLength(1);

    slowGates[0].resolve();
    const results = await Promise.all([first, second]);
    expect(results.map((result) => result.status)).toEqual([200, 200]);
    expect(fast.inFlight + slow.inFlight).toBe(0);

    // Each choice counted by target and reason, and each request's line says where and why.
    const prom = parsePromText((await send('GET', `${app.url}/metrics`)).body as string);
    const selected = (target: string) =>
      sampleValue(prom, 'bulkhead_llm_target_selected_total', { route: 'chat', target, reason: 'least_busy' });
    expect([selected('openai/gpt-fast'), selected('openai/gpt-slow')]).toEqual([4, 1]);
    const lines = log.events('call').filter((line) => line.tool === 'llm.chat');
    expect(lines).toHaveLength(5);
    expect(lines.map((line) => [line.target, line.choice]).sort()).toEqual([
      ...Array.from({ length: 4 }, () => ['openai/gpt-fast', 'least_busy']),
      ['openai/gpt-slow', 'least_busy'],
    ]);
  });
});
