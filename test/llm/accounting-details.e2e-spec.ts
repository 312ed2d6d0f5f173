import { FakeClock } from '../../src/common/fake-clock';
import { estimateInputTokens } from '../../src/llm/pricing';
import { createTestApp, type TestApp } from '../support/create-app';
import type { Deferred } from '../support/deferred';
import { eventually } from '../support/eventually';
import { type Response, send } from '../support/http-client';
import { openaiAnswer } from '../support/llm-answers';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { heldIn, json, Upstream } from '../support/upstream';

const ACME = testTenant('acme');
const AS_ACME = { authorization: `Bearer ${ACME.key}` };
/** Every answer bills 40 prompt and 100 completion tokens (a prompt within every request's estimate). */
const USED = 140;
const ask = (text: string, extra: Record<string, unknown> = {}) => ({
  model: 'chat',
  max_tokens: 1000,
  messages: [{ role: 'user' as const, content: text }],
  ...extra,
});

// What a request is charged and what it takes from its tenant's buckets, in the corners: a
// request that sets both output caps, an attempt that never left the pool's queue, a bucket in
// shadow mode.
describe('LLM accounting details', () => {
  let upstream: Upstream;
  let app: TestApp;
  let clock: FakeClock;
  let gates: Array<Deferred<void>>;

  beforeEach(async () => {
    clock = new FakeClock();
    gates = [];
    upstream = await Upstream.start(
      heldIn(gates, json(200, openaiAnswer('ok', { prompt_tokens: 40, completion_tokens: 100 }, 'gpt-primary'))),
    );
  });

  afterEach(async () => {
    for (const gate of gates) gate.resolve();
    await app?.close();
    await upstream.close();
  });

  /** A route of the upstream's one target, with no cache and no retry. */
  const route = (extra: Record<string, unknown> = {}) => ({
    lane: 'llm',
    cache: false,
    retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
    targets: [{ provider: 'openai', model: 'gpt-primary', baseUrl: upstream.url('/v1') }],
    ...extra,
  });

  async function start(extra: Record<string, unknown> = {}, routes: Record<string, unknown> = { chat: route() }) {
    app = await createTestApp(
      {
        auth: { apiKeys: [ACME.apiKey], adminToken: ADMIN_TOKEN },
        lanes: { llm: { concurrency: 4, queueCapacity: 4 } },
        budgets: { tenants: { acme: 1 } },
        llm: { routes, prices: { 'openai/gpt-primary': { inputPerMTokUsd: 1, outputPerMTokUsd: 1 } } },
        ...extra,
      },
      { clock },
    );
  }

  const chat = (body: Record<string, unknown>) =>
    send('POST', `${app.url}/v1/chat/completions`, { headers: AS_ACME, json: body });
  const spentUsd = async (): Promise<number> =>
    (await send('GET', `${app.url}/v1/admin/budgets/acme`, { headers: AS_ADMIN })).body.spentUsd;

  it('sends the smaller of max_tokens and max_completion_tokens, the cap its hold assumed, in one field', async () => {
    await start();

    const answering = chat(ask('capped', { max_tokens: 500, max_completion_tokens: 300 }));
    await eventually(() => expect(gates).toHaveLength(1));
    gates[0].resolve();

    expect((await answering).status).toBe(200);
    const sent = JSON.parse(upstream.requests[0].body) as Record<string, unknown>;
    expect(sent.max_completion_tokens).toBe(300);
    expect(sent).not.toHaveProperty('max_tokens');
  });

  it('charges nothing for an attempt that timed out still waiting for a permit of the pool', async () => {
    await start(
      { containment: { pools: { normalMaxConcurrency: 1, isolatedMaxConcurrency: 1 } } },
      { patient: route({ timeoutMs: 60_000 }), chat: route({ timeoutMs: 1_000 }) },
    );
    // The pool's one permit is the first request's: the second's attempt waits for it, and times out there.
    const first = chat({ ...ask('first'), model: 'patient' });
    await eventually(() => expect(gates).toHaveLength(1));
    const second = chat(ask('second'));
    await eventually(async () => expect((await send('GET', `${app.url}/v1/lanes`)).body.lanes.llm.active).toBe(2));
    await clock.advanceAsync(1_000);
    expect((await second).status).toBe(504);
    gates[0].resolve();
    expect((await first).status).toBe(200);

    expect(upstream.requests).toHaveLength(1);
    await eventually(async () => expect(await spentUsd()).toBeCloseTo(USED / 1e6, 9));
  });

  it('in shadow mode gives back only tokens it took: a request the bucket would refuse still pays for what it used', async () => {
    const tpm = 2_000;
    await start({ rateLimits: { tenants: { acme: { tpm } }, enforce: false } });
    const tokensLeft = (response: Response) => Number(/"tpm";r=(\d+)/.exec(String(response.headers.ratelimit))?.[1]);
    const worst = (text: string) => estimateInputTokens(ask(text)) + 1000;

    // The first takes its worst case; the second does not fit what is left and, in shadow mode, takes nothing.
    const first = chat(ask('first'));
    await eventually(() => expect(gates).toHaveLength(1));
    const second = chat(ask('second'));
    await eventually(() => expect(gates).toHaveLength(2));
    gates[1].resolve();
    expect((await second).status).toBe(200);
    gates[0].resolve();
    expect((await first).status).toBe(200);

    const third = chat(ask('third'));
    await eventually(() => expect(gates).toHaveLength(3));
    gates[2].resolve();
    expect(tokensLeft(await third)).toBe(tpm - 2 * USED - worst('third'));
  });
});
