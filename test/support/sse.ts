import type { ServerResponse } from 'node:http';
import { request } from 'undici';
import type { Deferred } from './deferred';
import type { UpstreamHandler } from './upstream';

/** OpenAI-wire chunks answering `pieces` of text, then the finish and the usage chunk. */
export function openaiChunks(
  pieces: string[],
  options: { model?: string; usage?: { prompt_tokens: number; completion_tokens: number } | null } = {},
): object[] {
  const { model = 'gpt-test', usage = { prompt_tokens: 12, completion_tokens: pieces.length } } = options;
  const base = { id: 'chatcmpl-s1', object: 'chat.completion.chunk', created: 1_700_000_000, model };
  const choice = (delta: object, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  });
  const chunks: object[] = [choice({ role: 'assistant', content: '' })];
  for (const piece of pieces) chunks.push(choice({ content: piece }));
  chunks.push(choice({}, 'stop'));
  if (usage)
    chunks.push({
      ...base,
      choices: [],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    });
  return chunks;
}

/**
 * OpenAI-wire chunks that refuse, as OpenAI's API streams a refusal: the role (no content, no
 * refusal yet), the refusal in `delta.refusal` pieces, the finish, then the usage chunk.
 */
export function openaiRefusalChunks(pieces: string[], options: { model?: string } = {}): object[] {
  const { model = 'gpt-test' } = options;
  const base = { id: 'chatcmpl-r1', object: 'chat.completion.chunk', created: 1_700_000_000, model };
  const choice = (delta: object, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  });
  return [
    choice({ role: 'assistant', content: null, refusal: null }),
    ...pieces.map((piece) => choice({ refusal: piece })),
    choice({}, 'stop'),
    { ...base, choices: [], usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } },
  ];
}

export interface StreamPlan {
  /** Before the chunk at this index, wait for the gate (a test deciding when more comes). */
  gates?: Map<number, Deferred<void>>;
  /** Drop the connection before the chunk at this index, with no `[DONE]`. */
  cutAt?: number;
}

/** An upstream that streams `chunks` as OpenAI does (`data: <json>`, then `data: [DONE]`). */
export function streamed(chunks: object[], plan: StreamPlan = {}): UpstreamHandler {
  return async (_request, response: ServerResponse) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let index = 0; index < chunks.length; index++) {
      const gate = plan.gates?.get(index);
      if (gate) await gate.promise;
      if (plan.cutAt === index) {
        response.socket?.destroy();
        return;
      }
      if (response.destroyed) return;
      // Each chunk handed to the socket before the next step, so a cut comes after what was sent.
      await new Promise<void>((resolve) =>
        response.write(`data: ${JSON.stringify(chunks[index])}\n\n`, () => resolve()),
      );
    }
    response.end('data: [DONE]\n\n');
  };
}

export interface SseAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The `data:` payloads in order, `[DONE]` included. */
  events: string[];
  /** The payloads that are JSON, parsed (everything but `[DONE]`). */
  chunks: Array<Record<string, any>>;
  /** Whether the stream ended with `data: [DONE]`. */
  done: boolean;
}

/** A streamed chat request read whole as raw Server-Sent Events (a JSON answer is in `events[0]`). */
export async function streamChat(
  base: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<SseAnswer> {
  const response = await request(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ stream: true, ...body }),
    signal,
  });
  const text = await response.body.text();
  const type = String(response.headers['content-type'] ?? '');
  const events = type.includes('event-stream') ? sseData(text) : [text];
  const chunks = events.filter((event) => event !== '[DONE]').map((event) => JSON.parse(event) as Record<string, any>);
  return { status: response.statusCode, headers: response.headers, events, chunks, done: events.at(-1) === '[DONE]' };
}

/** The `data:` payloads of an event stream's text. */
export function sseData(text: string): string[] {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => block.slice('data: '.length));
}

/** The text of streamed chunks, joined. */
export function streamedText(chunks: Array<Record<string, any>>): string {
  return chunks.map((chunk) => (chunk.choices?.[0]?.delta?.content as string | undefined) ?? '').join('');
}
