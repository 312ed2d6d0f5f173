import { createServiceLogger } from '../../src/logging';
import { estimateInputTokens } from '../../src/llm/pricing';
import { CapturedLog } from '../support/captured-log';
import { createTestApp, type TestApp } from '../support/create-app';
import { send } from '../support/http-client';
import { anthropicMessage, openaiAnswer } from '../support/llm-answers';
import { parsePromText, sampleValue } from '../support/prom-text';
import { openaiChunks, streamChat, streamed } from '../support/sse';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { json, Upstream, type UpstreamHandler } from '../support/upstream';

const ACME = testTenant('acme');
const AS_ACME = { authorization: `Bearer ${ACME.key}` };
const TARGET = 'openai/gpt-primary';
/** The output cap each request sends: what its hold covers of the completion. */
const MAX_TOKENS = 100;
const ask = { model: 'chat', max_tokens: MAX_TOKENS, messages: [{ role: 'user' as const, content: 'count me' }] };
/** Every prompt token the hold covered and the whole cap, at $1 per million tokens each. */
const WORST_USD = (estimateInputTokens(ask) + MAX_TOKENS) / 1_000_000;

/** A provider's answer whose usage is written as given: `1e400` is JSON for a number past any double. */
function answerWithUsage(usageJson: string): UpstreamHandler {
  const answer = JSON.stringify(openaiAnswer('the answer', { prompt_tokens: 0, completion_tokens: 0 }, 'gpt-primary'));
  const body = answer.replace(/"usage":\{[^}]*\}/, `"usage":${usageJson}`);
  return (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(body);
  };
}

// Usage is the provider's word on what an answer cost, and the one number of its answer that
// moves money: a count that is not one, or more than the request could use, is charged at most
// what the attempt held, counted and logged, and the answer itself is served.
describe('usage a provider reports wrong', () => {
  let upstream: Upstream;
  let app: TestApp;
  let log: CapturedLog;

  afterEach(async () => {
    await app?.close();
    await upstream?.close();
  });

  async function start(handler: UpstreamHandler, provider = 'openai'): Promise<void> {
    upstream = await Upstream.start(handler);
    log = new CapturedLog();
    app = await createTestApp(
      {
        auth: { apiKeys: [ACME.apiKey], adminToken: ADMIN_TOKEN },
        lanes: { llm: { concurrency: 4, queueCapacity: 4 } },
        budgets: { tenants: { acme: 1 } },
        llm: {
          routes: {
            chat: {
              lane: 'llm',
              cache: false,
              retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
              targets: [{ provider, model: 'gpt-primary', baseUrl: upstream.url('/v1'), apiKey: 'k' }],
            },
          },
          prices: { [`${provider}/gpt-primary`]: { inputPerMTokUsd: 1, outputPerMTokUsd: 1 } },
        },
      },
      { logger: createServiceLogger({ level: 'debug', destination: log }) },
    );
  }

  const budget = async (): Promise<{ spentUsd: number; reservedUsd: number }> =>
    (await send('GET', `${app.url}/v1/admin/budgets/acme`, { headers: AS_ADMIN })).body;

  async function rejected(reason: string): Promise<number | undefined> {
    const prom = parsePromText((await send('GET', `${app.url}/metrics`)).body as string);
    return sampleValue(prom, 'bulkhead_llm_usage_rejected_total', { target: TARGET, reason });
  }

  it('serves the answer, charges at most the hold for a negative prompt and a 1e308 completion, and counts both', async () => {
    await start(json(200, openaiAnswer('the answer', { prompt_tokens: -5, completion_tokens: 1e308 }, 'gpt-primary')));

    const answer = await send('POST', `${app.url}/v1/chat/completions`, { headers: AS_ACME, json: ask });

    expect(answer.status).toBe(200);
    expect(answer.body.choices[0].message.content).toBe('the answer');
    // The client sees what it was charged for: the whole estimate and the whole cap.
    expect(answer.body.usage).toMatchObject({
      prompt_tokens: estimateInputTokens(ask),
      completion_tokens: MAX_TOKENS,
      total_tokens: estimateInputTokens(ask) + MAX_TOKENS,
    });
    const { spentUsd, reservedUsd } = await budget();
    expect(spentUsd).toBeCloseTo(WORST_USD, 12);
    expect(Number.isFinite(spentUsd) && spentUsd <= 1).toBe(true);
    expect(reservedUsd).toBe(0);
    expect(await rejected('negative')).toBe(1);
    expect(await rejected('above_bound')).toBe(1);
    const warnings = log.lines.filter((line) => line.msg?.includes('usage count not charged as given'));
    expect(warnings.map((line) => line.msg)).toEqual([
      `${TARGET} reported a usage count not charged as given: prompt_tokens (negative)`,
      `${TARGET} reported a usage count not charged as given: completion_tokens (above_bound)`,
    ]);
    expect(log.text).not.toMatch(/1e\+308|count me|the answer/);
  });

  it('settles its hold for cache counts past any number (they once made the request fail and the hold linger)', async () => {
    await start(
      answerWithUsage('{"prompt_tokens":10,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":1e400}}'),
    );

    const answer = await send('POST', `${app.url}/v1/chat/completions`, { headers: AS_ACME, json: ask });

    expect(answer.status).toBe(200);
    expect(answer.body.usage).toMatchObject({ prompt_tokens: 10, prompt_tokens_details: { cached_tokens: 0 } });
    const { spentUsd, reservedUsd } = await budget();
    expect(spentUsd).toBeCloseTo(15 / 1_000_000, 12);
    expect(reservedUsd).toBe(0);
    expect(await rejected('not_finite')).toBe(1);
  });

  it('serves a fractional prompt, charging it rounded up', async () => {
    await start(answerWithUsage('{"prompt_tokens":9.5,"completion_tokens":5}'));

    const answer = await send('POST', `${app.url}/v1/chat/completions`, { headers: AS_ACME, json: ask });

    expect(answer.status).toBe(200);
    expect(answer.body.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
    expect((await budget()).spentUsd).toBeCloseTo(15 / 1_000_000, 12);
    expect(await rejected('not_integer')).toBe(1);
  });

  it('streams the answer, and the usage chunk the client asked for says what it was charged', async () => {
    const streamedAsk = { ...ask, stream: true, stream_options: { include_usage: true } };
    const worstUsd = (estimateInputTokens(streamedAsk) + MAX_TOKENS) / 1_000_000;
    const chunks = openaiChunks(['the ', 'answer'], {
      model: 'gpt-primary',
      usage: { prompt_tokens: -5, completion_tokens: 1e308 },
    });
    await start(streamed(chunks));

    const answer = await streamChat(app.url, streamedAsk, AS_ACME);

    expect(answer.status).toBe(200);
    expect(answer.done).toBe(true);
    const usage = answer.chunks.at(-1)!.usage as Record<string, number>;
    expect(usage).toMatchObject({ prompt_tokens: estimateInputTokens(streamedAsk), completion_tokens: MAX_TOKENS });
    expect(answer.chunks.at(-1)!.bulkhead.costUsd).toBeCloseTo(worstUsd, 12);
    const { spentUsd, reservedUsd } = await budget();
    expect(spentUsd).toBeCloseTo(worstUsd, 12);
    expect(reservedUsd).toBe(0);
    expect(await rejected('negative')).toBe(1);
    expect(await rejected('above_bound')).toBe(1);
  });

  it('shows a Messages client of a native Anthropic target the counts it was charged, not the ones sent', async () => {
    const message = anthropicMessage({ usage: { input_tokens: -5, output_tokens: 1e308, service_tier: 'standard' } });
    await start(json(200, message), 'anthropic');

    const answer = await send('POST', `${app.url}/v1/messages`, { headers: AS_ACME, json: ask });

    expect(answer.status).toBe(200);
    expect(answer.body.content).toEqual([{ type: 'text', text: 'Hi.' }]);
    expect(answer.body.usage).toMatchObject({ output_tokens: MAX_TOKENS, service_tier: 'standard' });
    expect(answer.body.usage.input_tokens).toBeGreaterThan(0);
    const { spentUsd, reservedUsd } = await budget();
    expect(Number.isFinite(spentUsd) && spentUsd > 0 && spentUsd <= 1).toBe(true);
    expect(spentUsd).toBeCloseTo((answer.body.usage.input_tokens + MAX_TOKENS) / 1_000_000, 12);
    expect(reservedUsd).toBe(0);
  });
});
