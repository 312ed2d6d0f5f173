import Anthropic from '@anthropic-ai/sdk';
import type { ServerResponse } from 'node:http';
import type { Deferred } from '../support/deferred';
import { createTestApp, type TestApp } from '../support/create-app';
import { eventually } from '../support/eventually';
import { send } from '../support/http-client';
import { anthropicMessage } from '../support/llm-answers';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { heldIn, json, Upstream, type UpstreamRequest } from '../support/upstream';

const ACME = testTenant('acme');
/** What Anthropic writes to its cache for an hour of the prompt below. */
const WRITTEN = 100_000;
/** Anthropic's usage for it: every prompt token written for an hour, one token out. */
const HOUR_WRITE_USAGE = {
  input_tokens: 0,
  cache_creation_input_tokens: WRITTEN,
  cache_read_input_tokens: 0,
  cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: WRITTEN },
  output_tokens: 1,
};
/** Sonnet 4.5: $6 per million tokens written for an hour (2x its $3 input), $15 per million out. */
const BILLED_USD = (WRITTEN * 6 + 1 * 15) / 1_000_000;

/** 100,000 tokens' worth of document, marked to be cached for an hour. */
const HOUR_CACHED_REQUEST = {
  model: 'sonnet',
  max_tokens: 16,
  system: [
    {
      type: 'text' as const,
      text: 'Read it. '.repeat(12_500),
      cache_control: { type: 'ephemeral' as const, ttl: '1h' as const },
    },
  ],
  messages: [{ role: 'user' as const, content: 'Summarise.' }],
};

/** A fake Anthropic answering `usage`, streamed when asked. */
function anthropicAnswering(usage: Record<string, unknown>) {
  const message = anthropicMessage({ model: 'claude-sonnet-4-5', usage });
  return (request: UpstreamRequest, response: ServerResponse) => {
    if (!(JSON.parse(request.body) as { stream?: boolean }).stream) return json(200, message)(request, response);
    const events = [
      {
        type: 'message_start',
        message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 0 } },
      },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi.' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } },
      { type: 'message_stop' },
    ];
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.end(events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join(''));
    return undefined;
  };
}

// Anthropic bills a prompt written to its cache for an hour at twice the input rate, for 5
// minutes at 1.25 times: each is charged, and held before the attempt, at its own rate.
describe('prompt cache writes, priced by how long they are kept', () => {
  let anthropic: Upstream;
  let app: TestApp;
  let gates: Array<Deferred<void>>;

  beforeEach(async () => {
    gates = [];
    anthropic = await Upstream.start(heldIn(gates, anthropicAnswering(HOUR_WRITE_USAGE)));
    app = await createTestApp({
      auth: { apiKeys: [ACME.apiKey], adminToken: ADMIN_TOKEN },
      lanes: { llm: { concurrency: 4, queueCapacity: 4 } },
      budgets: { tenants: { acme: 5 } },
      llm: {
        routes: {
          sonnet: {
            lane: 'llm',
            cache: false,
            targets: [
              { provider: 'anthropic', model: 'claude-sonnet-4-5', baseUrl: anthropic.url('/v1'), apiKey: 'k' },
            ],
          },
        },
      },
    });
  });

  afterEach(async () => {
    for (const gate of gates) gate.resolve();
    await app.close();
    await anthropic.close();
  });

  const client = () => new Anthropic({ baseURL: app.url, apiKey: ACME.key, maxRetries: 0 });
  const budget = async (): Promise<{ spentUsd: number; reservedUsd: number }> =>
    (await send('GET', `${app.url}/v1/admin/budgets/acme`, { headers: AS_ADMIN })).body;

  it('charges 100,000 tokens written for an hour $0.600, as Anthropic bills them, not the 5-minute $0.375', async () => {
    const answering = client().messages.create(HOUR_CACHED_REQUEST);
    await eventually(() => expect(gates).toHaveLength(1));
    // Held before it went: every prompt token at the dearest prompt rate, an hour's write.
    expect((await budget()).reservedUsd).toBeGreaterThanOrEqual(0.6);
    gates[0].resolve();

    const message = await answering;

    expect(message.usage).toMatchObject({
      cache_creation_input_tokens: WRITTEN,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: WRITTEN },
    });
    const { spentUsd, reservedUsd } = await budget();
    expect(spentUsd).toBeCloseTo(BILLED_USD, 9);
    expect(reservedUsd).toBe(0);
  });

  it('charges the same streamed, and tells a streaming client how long its writes are kept', async () => {
    const stream = client().messages.stream(HOUR_CACHED_REQUEST);
    await eventually(() => expect(gates).toHaveLength(1));
    gates[0].resolve();

    const message = await stream.finalMessage();

    expect(message.usage).toMatchObject({
      cache_creation_input_tokens: WRITTEN,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: WRITTEN },
    });
    expect((await budget()).spentUsd).toBeCloseTo(BILLED_USD, 9);
  });

  it('says the hour-long writes to a Chat Completions client, in the usage it is charged', async () => {
    const { model, system, max_tokens } = HOUR_CACHED_REQUEST;
    const answering = send('POST', `${app.url}/v1/chat/completions`, {
      headers: { authorization: `Bearer ${ACME.key}` },
      json: {
        model,
        max_tokens,
        messages: [
          { role: 'system', content: system[0].text },
          { role: 'user', content: 'Summarise.' },
        ],
      },
    });
    await eventually(() => expect(gates).toHaveLength(1));
    gates[0].resolve();

    const answer = await answering;

    expect(answer.status).toBe(200);
    expect(answer.body.usage).toMatchObject({
      prompt_tokens: WRITTEN,
      prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: WRITTEN, cache_write_1h_tokens: WRITTEN },
    });
    expect((await budget()).spentUsd).toBeCloseTo(BILLED_USD, 9);
  });
});
