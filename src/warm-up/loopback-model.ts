import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the warm-up's model answers, whole: an OpenAI chat completion of a few words. */
const COMPLETION = JSON.stringify({
  id: 'chatcmpl-warm-up',
  object: 'chat.completion',
  created: 1_767_225_600,
  model: 'warm-up',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Warm.' }, finish_reason: 'stop', logprobs: null }],
  usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 },
});

/** The same answer streamed: a role chunk, two pieces, the finish, the usage, `[DONE]`. */
const STREAM = [
  { choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
  { choices: [{ index: 0, delta: { content: 'Wa' }, finish_reason: null }] },
  { choices: [{ index: 0, delta: { content: 'rm.' }, finish_reason: null }] },
  { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
  { choices: [], usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 } },
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
    const server = createServer(answer);
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

function answer(request: IncomingMessage, response: ServerResponse): void {
  let body = '';
  request.setEncoding('utf8');
  request.on('data', (piece: string) => (body += piece));
  request.on('end', () => {
    if (body.includes('"stream":true')) {
      response.writeHead(200, { 'content-type': 'text/event-stream' }).end(STREAM);
    } else {
      response.writeHead(200, { 'content-type': 'application/json' }).end(COMPLETION);
    }
  });
}
