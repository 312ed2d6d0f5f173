import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const USAGE = { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 };
const MESSAGE = { role: 'assistant', content: 'Warm.' };

/**
 * What the warm-up's model answers, whole: an OpenAI chat completion of a few words, in the
 * shapes the servers behind an `openai` target give it (OpenAI's own with its usage details, a
 * shorter one as vLLM or Ollama send, one with the fields in another order). Each a shape of
 * its own, so the code that reads answers is warm for any server's (client-shapes.ts says why).
 */
const COMPLETIONS = [
  {
    id: 'chatcmpl-warm-up',
    object: 'chat.completion',
    created: 1_767_225_600,
    model: 'warm-up',
    choices: [{ index: 0, message: MESSAGE, finish_reason: 'stop', logprobs: null }],
    usage: USAGE,
  },
  {
    id: 'chatcmpl-warm-up',
    object: 'chat.completion',
    created: 1_767_225_600,
    model: 'warm-up-2025-01-01',
    choices: [
      {
        index: 0,
        message: { ...MESSAGE, refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: {
      ...USAGE,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
    },
    service_tier: 'default',
    system_fingerprint: 'fp_warm_up',
  },
  {
    id: 'chatcmpl-warm-up',
    object: 'chat.completion',
    created: 1_767_225_600,
    model: 'warm-up',
    choices: [
      { index: 0, message: { ...MESSAGE, tool_calls: [] }, logprobs: null, finish_reason: 'stop', stop_reason: null },
    ],
    usage: USAGE,
    prompt_logprobs: null,
  },
  {
    model: 'warm-up',
    created: 1_767_225_600,
    id: 'chatcmpl-warm-up',
    object: 'chat.completion',
    system_fingerprint: 'fp_ollama',
    choices: [{ index: 0, message: MESSAGE, finish_reason: 'stop' }],
    usage: USAGE,
  },
  {
    id: 'chatcmpl-warm-up',
    object: 'chat.completion',
    created: 1_767_225_600,
    model: 'warm-up',
    choices: [{ finish_reason: 'stop', index: 0, message: MESSAGE }],
    usage: { total_tokens: 14, prompt_tokens: 12, completion_tokens: 2 },
  },
].map((completion) => JSON.stringify(completion));

/** The same answer streamed: a role chunk, two pieces, the finish, the usage, `[DONE]`. */
const STREAM = [
  { choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
  { choices: [{ index: 0, delta: { content: 'Wa' }, finish_reason: null }] },
  { choices: [{ index: 0, delta: { content: 'rm.' }, finish_reason: null }] },
  { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
  { choices: [], usage: USAGE },
]
  .map((chunk) => {
    const event = { id: 'chatcmpl-warm-up', object: 'chat.completion.chunk', created: 1_767_225_600, model: 'warm-up' };
    return `data: ${JSON.stringify({ ...event, ...chunk })}\n\n`;
  })
  .join('')
  .concat('data: [DONE]\n\n');

/**
 * A model server on loopback that answers every chat completion at once, as OpenAI's API would
 * (whole or streamed, as asked): the target of the warm-up's route, in the service's own
 * process, so that warming the request path sends nothing anywhere.
 */
export class LoopbackModel {
  private constructor(
    private readonly server: Server,
    /** `http://127.0.0.1:<port>/v1`: an `openai` target's base URL. */
    readonly baseUrl: string,
  ) {}

  static async start(): Promise<LoopbackModel> {
    let taken = 0;
    const server = createServer((request, response) => answer(request, response, taken++));
    await new Promise<void>((listening, failed) => {
      server.once('error', failed);
      server.listen(0, '127.0.0.1', () => listening());
    });
    const { port } = server.address() as AddressInfo;
    return new LoopbackModel(server, `http://127.0.0.1:${port}/v1`);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((closed) => this.server.close(() => closed()));
  }
}

/** Answers the `n`th request the server took. */
function answer(request: IncomingMessage, response: ServerResponse, n: number): void {
  let body = '';
  request.setEncoding('utf8');
  request.on('data', (piece: string) => (body += piece));
  request.on('end', () => {
    if (body.includes('"stream":true')) {
      response.writeHead(200, { 'content-type': 'text/event-stream' }).end(STREAM);
    } else {
      response.writeHead(200, { 'content-type': 'application/json' }).end(COMPLETIONS[n % COMPLETIONS.length]);
    }
  });
}
