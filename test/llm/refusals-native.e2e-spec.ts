import Anthropic from '@anthropic-ai/sdk';
import type { ServerResponse } from 'node:http';
import { createTestApp, type TestApp } from '../support/create-app';
import { anthropicMessage } from '../support/llm-answers';
import { testTenant } from '../support/tenants';
import { json, Upstream, type UpstreamRequest } from '../support/upstream';

const ACME = testTenant('acme');

/** Claude's refusal, as Anthropic's API answers one: what it said, and `stop_reason: refusal`. */
const CLAUDE_REFUSAL = anthropicMessage({
  id: 'msg_refusal_1',
  content: [{ type: 'text', text: 'I cannot help with that.' }],
  stop_reason: 'refusal',
  usage: { input_tokens: 12, output_tokens: 6 },
});

/** The same refusal streamed: its one text block, then a message_delta that says refusal. */
const CLAUDE_REFUSAL_EVENTS = [
  {
    type: 'message_start',
    message: { ...CLAUDE_REFUSAL, content: [], stop_reason: null, usage: { input_tokens: 12, output_tokens: 1 } },
  },
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'I cannot help with that.' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'message_delta', delta: { stop_reason: 'refusal', stop_sequence: null }, usage: { output_tokens: 6 } },
  { type: 'message_stop' },
];

/** A question Claude refuses before a word of its answer: no block at all, only the stop reason. */
const AT_ONCE = 'refuse before a word';

function refusingClaude(request: UpstreamRequest, response: ServerResponse): void {
  const atOnce = request.body.includes(AT_ONCE);
  if (!(JSON.parse(request.body) as { stream?: boolean }).stream) {
    json(200, atOnce ? { ...CLAUDE_REFUSAL, content: [] } : CLAUDE_REFUSAL)(request, response);
    return;
  }
  const events = CLAUDE_REFUSAL_EVENTS.filter((event) => !(atOnce && event.type.startsWith('content_block')));
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.end(events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join(''));
}

/**
 * A Claude target's own refusal on the Messages API, sent as it came: it comes back as Claude gave
 * it, streamed or not, with its text or with no block at all.
 */
describe("a Claude target's refusal, as sent", () => {
  let app: TestApp;
  let claude: Upstream;

  beforeAll(async () => {
    claude = await Upstream.start(refusingClaude);
    app = await createTestApp({
      auth: { allowAnonymous: false, apiKeys: [ACME.apiKey] },
      lanes: { llm: { concurrency: 4, queueCapacity: 4 } },
      llm: {
        routes: {
          claude: {
            lane: 'llm',
            targets: [
              { provider: 'anthropic', model: 'claude-refusing', baseUrl: claude.url('/v1'), apiKey: 'sk-ant' },
            ],
          },
        },
      },
    });
  });

  afterAll(async () => {
    await app?.close();
    await claude.close();
  });

  const anthropic = () => new Anthropic({ baseURL: app.url, apiKey: ACME.key, maxRetries: 0 });
  const ask = (text: string) => [{ role: 'user' as const, content: text }];

  it("answers Claude's refusal as Claude gave it", async () => {
    const message = await anthropic().messages.create({ model: 'claude', max_tokens: 100, messages: ask('bad') });

    expect(message).toMatchObject({ content: CLAUDE_REFUSAL.content, stop_reason: 'refusal' });
  });

  it("streams Claude's refusal event by event, its message_delta saying refusal", async () => {
    const message = await anthropic()
      .messages.stream({ model: 'claude', max_tokens: 100, messages: ask('bad, streamed') })
      .finalMessage();

    expect(message).toMatchObject({ content: CLAUDE_REFUSAL.content, stop_reason: 'refusal' });
  });

  it('answers a refusal Claude made before any text, streamed or not: no block, the stop reason refusal', async () => {
    const request = { model: 'claude', max_tokens: 100, messages: ask(AT_ONCE) };
    const whole = await anthropic().messages.create(request);
    const streamedMessage = await anthropic().messages.stream(request).finalMessage();

    expect(whole).toMatchObject({ content: [], stop_reason: 'refusal' });
    expect(streamedMessage).toMatchObject({ content: [], stop_reason: 'refusal' });
  });
});
