/**
 * An OpenAI-compatible model server for the LLM proxy benchmark, in a process of its own on
 * loopback so its CPU is not the service's or the load generator's. Routes:
 *   POST /v1/chat/completions  reads the body as a provider would (JSON with `model` and
 *                              `messages`); for {@link MODEL}, 200 with {@link COMPLETION_BODY}
 *                              (a fixed non-streamed chat.completion with usage) at once;
 *                              anything else 400 in OpenAI's error shape, counted as `rejected`
 *   POST /v1/embeddings        the same for {@link EMBED_MODEL}: 200 with {@link EMBEDDINGS_BODY}
 *                              (one vector of 8 floats, with usage) for a body with an `input`
 *   GET  /stats                requests, in flight, rejected, requests by the body's `user`
 *                              (each side of the benchmark sends its own); `cpuUs`: its CPU
 *                              time so far
 * Anything else is 404. The answer is the same bytes every time, so every proxy in front of it
 * has the same work to do, and a client can check each answer with one substring.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type Child, stopChild } from '../support/processes';
import { answerStats, listenOnLoopback, startServerProcess } from '../support/server-process';
import { call, waitUntil } from '../support/service';

/** The model the upstream serves; what each side's request reaches it as. */
export const MODEL = 'gpt-4o-mini';
/** The assistant's answer, the content each client checks for. */
export const ANSWER_TEXT = 'Hello from the loopback model.';
export const USAGE = { prompt_tokens: 13, completion_tokens: 7, total_tokens: 20 };

/** The answer, as OpenAI shapes one (the dated model name included). */
export const COMPLETION_BODY = JSON.stringify({
  id: 'chatcmpl-bench-0001',
  object: 'chat.completion',
  created: 1_764_547_200,
  model: `${MODEL}-2024-07-18`,
  choices: [
    {
      index: 0,
      message: { role: 'assistant', content: ANSWER_TEXT, refusal: null, annotations: [] },
      logprobs: null,
      finish_reason: 'stop',
    },
  ],
  usage: USAGE,
  service_tier: 'default',
  system_fingerprint: 'fp_bench',
});

/** The embeddings model the upstream serves. */
export const EMBED_MODEL = 'text-embedding-3-small';
/** The one vector every embeddings answer holds: exact in float32 and in JSON. */
export const EMBEDDING = [0.5, -0.25, 0.125, 0.0625, -0.5, 0.25, -0.125, 0.75];
export const EMBED_USAGE = { prompt_tokens: 4, total_tokens: 4 };

/** The embeddings answer, as OpenAI shapes one. */
export const EMBEDDINGS_BODY = JSON.stringify({
  object: 'list',
  data: [{ object: 'embedding', index: 0, embedding: EMBEDDING }],
  model: EMBED_MODEL,
  usage: EMBED_USAGE,
});

export interface OpenAiUpstreamStats {
  requests: number;
  inFlight: number;
  /** Requests answered 400: not JSON, no messages, or another model. */
  rejected: number;
  /** Answered requests by the body's `user` field (`''` without one). */
  byUser: Record<string, number>;
  /** CPU time (user + system) of the upstream process so far, in µs. */
  cpuUs: number;
}

export interface OpenAiUpstream {
  /** `http://127.0.0.1:<port>` */
  readonly base: string;
  /** `<base>/v1`: what an OpenAI client or provider takes as its base URL. */
  readonly baseUrl: string;
  readonly child: Child;
  stats(): Promise<OpenAiUpstreamStats>;
  stop(): Promise<void>;
}

const READY = 'OPENAI_UPSTREAM_PORT';
/** How long the upstream holds no call and takes no request before it counts as idle. */
const QUIET_MS = 250;

/** Starts the upstream process and waits until it listens. */
export async function startOpenAiUpstream(name = 'openai-upstream'): Promise<OpenAiUpstream> {
  const { child, base } = await startServerProcess(name, __filename, READY);
  return {
    base,
    baseUrl: `${base}/v1`,
    child,
    stats: async () => JSON.parse((await call(`${base}/stats`)).text) as OpenAiUpstreamStats,
    stop: () => stopChild(child),
  };
}

/**
 * Until the upstream has held no call for {@link QUIET_MS}: a client leaving does not end a
 * proxy's calls, and a busy Portkey still forwards what it had read for a while after. Answers
 * its counts then.
 */
export async function settle(upstream: OpenAiUpstream): Promise<OpenAiUpstreamStats> {
  let last = await upstream.stats();
  let quietSince = performance.now();
  await waitUntil(
    'the upstream is idle',
    async () => {
      const now = await upstream.stats();
      if (now.inFlight > 0 || now.requests !== last.requests) quietSince = performance.now();
      last = now;
      return performance.now() - quietSince >= QUIET_MS;
    },
    10_000,
    50,
  );
  return last;
}

function serve(): void {
  const stats = { requests: 0, inFlight: 0, rejected: 0, byUser: {} as Record<string, number> };
  const answers = { completion: Buffer.from(COMPLETION_BODY), embeddings: Buffer.from(EMBEDDINGS_BODY) };
  const headersOf = (answer: Buffer) => ({
    'content-type': 'application/json',
    'content-length': String(answer.length),
  });
  const answerHeaders = { completion: headersOf(answers.completion), embeddings: headersOf(answers.embeddings) };

  const reject = (response: ServerResponse, message: string) => {
    stats.rejected++;
    response
      .writeHead(400, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code: null } }));
  };

  const complete = (request: IncomingMessage, response: ServerResponse, kind: 'completion' | 'embeddings') => {
    stats.requests++;
    stats.inFlight++;
    response.once('close', () => stats.inFlight--);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('end', () => {
      if (response.destroyed) return;
      let body: { model?: unknown; messages?: unknown; input?: unknown; user?: unknown };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
      } catch {
        return reject(response, 'the body is not JSON');
      }
      if (kind === 'embeddings') {
        if (body?.input === undefined) return reject(response, 'no input');
        if (body.model !== EMBED_MODEL) return reject(response, `unknown model ${JSON.stringify(body.model)}`);
      } else {
        if (!Array.isArray(body?.messages) || body.messages.length === 0) return reject(response, 'no messages');
        if (body.model !== MODEL) return reject(response, `unknown model ${JSON.stringify(body.model)}`);
      }
      const user = typeof body.user === 'string' ? body.user : '';
      stats.byUser[user] = (stats.byUser[user] ?? 0) + 1;
      response.writeHead(200, answerHeaders[kind]).end(answers[kind]);
    });
  };

  const server = createServer((request, response) => {
    if (request.method === 'POST' && request.url === '/v1/chat/completions') {
      return complete(request, response, 'completion');
    }
    if (request.method === 'POST' && request.url === '/v1/embeddings') return complete(request, response, 'embeddings');
    request.resume();
    if (request.url === '/stats') return answerStats(response, stats);
    response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
  });
  listenOnLoopback(server, READY);
}

if (require.main === module) serve();
