import { FakeClock } from '../../src/common/fake-clock';
import { estimateInputTokens } from '../../src/llm/pricing';
import { abortableRequest } from '../support/abortable-request';
import { createTestApp, type TestApp } from '../support/create-app';
import type { Deferred } from '../support/deferred';
import { eventually } from '../support/eventually';
import { send, type Response } from '../support/http-client';
import { openaiAnswer } from '../support/llm-answers';
import { getLanes } from '../support/service-reads';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { heldIn, json, Upstream } from '../support/upstream';

const ACME = testTenant('acme');
const AS_ACME = { authorization: `Bearer ${ACME.key}` };
const TPM = 1_000_000;
/** What the provider bills one run: 40 prompt (within the request's estimate) and 100 completion tokens. */
const RUN_TOKENS = 140;
const ask = (text: string) => ({
  model: 'chat',
  max_tokens: 1000,
  messages: [{ role: 'user' as const, content: text }],
});
const worstCase = (text: string) => estimateInputTokens(ask(text)) + 1000;

// Identical concurrent misses share one provider run. The run owns its accounting: whichever of
// its clients leave, it settles its tokens and reports its attempts when it ends.
describe('identical requests joined into one provider run', () => {
  let upstream: Upstream;
  let app: TestApp;
  let gates: Array<Deferred<void>>;

  beforeEach(async () => {
    gates = [];
    upstream = await Upstream.start(
      heldIn(gates, json(200, openaiAnswer('joined', { prompt_tokens: 40, completion_tokens: 100 }, 'gpt-primary'))),
    );
    app = await createTestApp(
      {
        auth: { apiKeys: [ACME.apiKey], adminToken: ADMIN_TOKEN },
        lanes: { llm: { concurrency: 4, queueCapacity: 4 } },
        rateLimits: { tenants: { acme: { tpm: TPM } } },
        llm: {
          routes: {
            chat: {
              lane: 'llm',
              retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
              targets: [{ provider: 'openai', model: 'gpt-primary', baseUrl: upstream.url('/v1') }],
            },
          },
        },
      },
      // Virtual time stands still: the tokens-per-minute bucket does not refill under the test.
      { clock: new FakeClock() },
    );
  });

  afterEach(async () => {
    for (const gate of gates) gate.resolve();
    await app?.close();
    await upstream.close();
  });

  const chat = (text: string, headers: Record<string, string> = AS_ACME) =>
    send('POST', `${app.url}/v1/chat/completions`, { headers, json: ask(text) });
  const tokensLeft = (response: Response) => Number(/"tpm";r=(\d+)/.exec(String(response.headers.ratelimit))?.[1]);

  async function metric(name: string): Promise<string[]> {
    const { body } = await send('GET', `${app.url}/metrics`);
    return (body as string).split('\n').filter((line) => line.startsWith(name));
  }

  it('settles the run and counts its attempt when the client that started it has left', async () => {
    const leaving = abortableRequest('POST', `${app.url}/v1/chat/completions`, { headers: AS_ACME, json: ask('same') });
    await eventually(() => expect(gates).toHaveLength(1));
    const staying = chat('same');
    await eventually(async () => expect((await getLanes(app.url)).llm.active).toBe(1));
    await leaving.abort();
    // Let the service see the first client go before the run ends.
    await eventually(async () => expect(await metric('bulkhead_llm_cache_total')).toHaveLength(1));

    gates[0].resolve();
    const answer = await staying;

    expect(answer.status).toBe(200);
    expect(upstream.requests).toHaveLength(1);
    expect(await metric('bulkhead_llm_requests_total{')).toEqual([
      'bulkhead_llm_requests_total{route="chat",target="openai/gpt-primary",outcome="ok"} 1',
    ]);
    expect(await metric('bulkhead_llm_tokens_total{')).toEqual([
      'bulkhead_llm_tokens_total{route="chat",target="openai/gpt-primary",kind="prompt"} 40',
      'bulkhead_llm_tokens_total{route="chat",target="openai/gpt-primary",kind="completion"} 100',
    ]);
    // The run's real usage stays taken; the worst cases both clients held came back.
    const next = chat('after');
    await eventually(() => expect(gates).toHaveLength(2));
    gates[1].resolve();
    expect(tokensLeft(await next)).toBe(TPM - RUN_TOKENS - worstCase('after'));
  });

  it('never lets a contained tenant join a run made on the normal pool', async () => {
    const normal = chat('same');
    await eventually(() => expect(gates).toHaveLength(1));
    const contained = await send('PUT', `${app.url}/v1/admin/containment/acme`, {
      headers: AS_ADMIN,
      json: { state: 'active', posture: 'degraded' },
    });
    expect(contained.status).toBe(200);

    const isolated = chat('same');
    await eventually(() => expect(gates).toHaveLength(2));
    for (const gate of gates) gate.resolve();

    expect((await normal).status).toBe(200);
    expect((await isolated).status).toBe(200);
    expect(upstream.requests).toHaveLength(2);
  });
});
