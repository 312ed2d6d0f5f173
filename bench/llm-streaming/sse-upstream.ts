/**
 * A model server that streams, for the streaming benchmark, in a process of its own on loopback.
 * Routes:
 *   POST /v1/chat/completions  reads the body as a provider would (JSON with `model`, `messages`
 *                              and `stream: true`); for {@link MODEL}, 200 `text/event-stream` at
 *                              once, then OpenAI's chunks as `data: <json>\n\n`, each written on
 *                              its own with no wait between them: the role, {@link CONTENT_CHUNKS}
 *                              content chunks ({@link piece}), the finish chunk, the usage chunk
 *                              (when `stream_options.include_usage`), `data: [DONE]`; anything
 *                              else 400 in OpenAI's error shape, counted as `rejected`
 *   POST /first-chunk-after-<N>ms/v1/chat/completions
 *                              the same, the first chunk N ms after the headers (a model's time
 *                              to its first token)
 *   GET  /stats                requests, in flight, streams ended with [DONE], streams whose
 *                              caller left first, rejected, requests by the body's `user`,
 *                              connections that carried a stream; `cpuUs`: its CPU time so far
 * Anything else is 404. Every stream is the same bytes, built once, so the server's own work is
 * small and the same whoever asks.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type Child, stopChild } from '../support/processes';
import { answerStats, listenOnLoopback, startServerProcess } from '../support/server-process';
import { call } from '../support/service';

export const MODEL = 'gpt-4o-mini';
/** Content chunks in every answer. */
export const CONTENT_CHUNKS = 200;
/** The text of content chunk `index` (0-based): a client checks each arrived, in order. */
export const piece = (index: number): string => `w${index} `;
export const USAGE = { prompt_tokens: 26, completion_tokens: CONTENT_CHUNKS, total_tokens: 26 + CONTENT_CHUNKS };

const ID = 'chatcmpl-bench-stream';
const CREATED = 1_764_547_200;

/** The events of one answer, each `data: <json>\n\n`; the usage chunk apart, sent only when asked. */
function events(): { chunks: string[]; usage: string } {
  const base = { id: ID, object: 'chat.completion.chunk', created: CREATED, model: `${MODEL}-2024-07-18` };
  const event = (chunk: object) => `data: ${JSON.stringify({ ...base, system_fingerprint: 'fp_bench', ...chunk })}\n\n`;
  const choice = (delta: object, finishReason: string | null = null) =>
    event({ choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] });
  const chunks = [choice({ role: 'assistant', content: '', refusal: null })];
  for (let index = 0; index < CONTENT_CHUNKS; index++) chunks.push(choice({ content: piece(index) }));
  chunks.push(choice({}, 'stop'));
  return { chunks, usage: event({ choices: [], usage: USAGE }) };
}

export interface SseUpstreamStats {
  requests: number;
  inFlight: number;
  /** Streams that went out whole, to `[DONE]`. */
  completed: number;
  /** Streams whose caller closed the connection before their end. */
  cancelled: number;
  /** Requests answered 400: not JSON, no messages, not a stream, or another model. */
  rejected: number;
  /** Streamed requests by the body's `user` field (`''` without one). */
  byUser: Record<string, number>;
  /** Connections that carried a stream so far: a caller that reuses its connections opens few. */
  connections: number;
  /** CPU time (user + system) of the process so far, in µs. */
  cpuUs: number;
}

export interface SseUpstream {
  /** `<base>/v1`: the chunks at once. */
  readonly baseUrl: string;
  readonly child: Child;
  /** The base URL whose first chunk comes `ms` after the headers. */
  delayedBaseUrl(ms: number): string;
  stats(): Promise<SseUpstreamStats>;
  stop(): Promise<void>;
}

const READY = 'SSE_UPSTREAM_PORT';
const PATH = /^(?:\/first-chunk-after-(\d+)ms)?\/v1\/chat\/completions$/;

export async function startSseUpstream(name = 'sse-upstream'): Promise<SseUpstream> {
  const { child, base } = await startServerProcess(name, __filename, READY);
  return {
    baseUrl: `${base}/v1`,
    child,
    delayedBaseUrl: (ms) => `${base}/first-chunk-after-${ms}ms/v1`,
    stats: async () => JSON.parse((await call(`${base}/stats`)).text) as SseUpstreamStats,
    stop: () => stopChild(child),
  };
}

function serve(): void {
  const stats = {
    requests: 0,
    inFlight: 0,
    completed: 0,
    cancelled: 0,
    rejected: 0,
    byUser: {} as Record<string, number>,
    connections: 0,
  };
  const { chunks, usage } = events();
  const done = 'data: [DONE]\n\n';

  const reject = (response: ServerResponse, message: string) => {
    stats.rejected++;
    response
      .writeHead(400, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code: null } }));
  };

  const send = (response: ServerResponse, withUsage: boolean) => {
    if (response.destroyed) return;
    for (const chunk of chunks) response.write(chunk);
    if (withUsage) response.write(usage);
    response.end(done);
    stats.completed++;
  };

  const streamSockets = new WeakSet<object>();
  const stream = (request: IncomingMessage, response: ServerResponse, firstChunkAfterMs: number) => {
    stats.requests++;
    if (!streamSockets.has(request.socket)) {
      streamSockets.add(request.socket);
      stats.connections++;
    }
    stats.inFlight++;
    let timer: NodeJS.Timeout | undefined;
    response.once('close', () => {
      stats.inFlight--;
      clearTimeout(timer);
      if (!response.writableFinished) stats.cancelled++;
    });
    const body: Buffer[] = [];
    request.on('data', (part: Buffer) => body.push(part));
    request.once('end', () => {
      if (response.destroyed) return;
      let parsed: { model?: unknown; messages?: unknown; stream?: unknown; stream_options?: unknown; user?: unknown };
      try {
        parsed = JSON.parse(Buffer.concat(body).toString('utf8')) as typeof parsed;
      } catch {
        return reject(response, 'the body is not JSON');
      }
      if (!Array.isArray(parsed?.messages) || parsed.messages.length === 0) return reject(response, 'no messages');
      if (parsed.model !== MODEL) return reject(response, `unknown model ${JSON.stringify(parsed.model)}`);
      if (parsed.stream !== true) return reject(response, 'this server only streams');
      const user = typeof parsed.user === 'string' ? parsed.user : '';
      stats.byUser[user] = (stats.byUser[user] ?? 0) + 1;
      const options = parsed.stream_options as { include_usage?: unknown } | undefined;
      const withUsage = options?.include_usage === true;
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      response.flushHeaders();
      if (firstChunkAfterMs === 0) send(response, withUsage);
      else timer = setTimeout(() => send(response, withUsage), firstChunkAfterMs);
    });
  };

  const server = createServer((request, response) => {
    const path = request.method === 'POST' ? PATH.exec(request.url ?? '') : null;
    if (path) return stream(request, response, Number(path[1] ?? 0));
    request.resume();
    if (request.url === '/stats') return answerStats(response, stats);
    response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
  });
  listenOnLoopback(server, READY);
}

if (require.main === module) serve();
