/**
 * A model server with a heavy tail, for the hedging benchmark, in a process of its own on
 * loopback. Each request it receives draws its time from a seeded random: {@link TAIL}'s
 * `slowShare` of them take about `slowMs`, the rest about `fastMs` (each ± `spread`); the draws
 * come in the order requests arrive, so a hedge of a slow request is slow only as often as any
 * other request, which is what makes hedging work (a busy backend, not a hard question).
 * Routes:
 *   POST /v1/chat/completions  reads the body as a provider would (JSON with `model` and
 *                              `messages`); for {@link MODEL}, after its drawn time, 200 with
 *                              {@link COMPLETION_BODY}; a caller that leaves first gets nothing
 *                              (counted `cancelled`); anything else 400, counted `rejected`
 *   POST /reset?seed=N         every count to zero, the random started again from seed N
 *   GET  /stats                the counts; `cpuUs`: the process's CPU time so far
 * Anything else is 404.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
// The project's own seeded generator (a leaf module, nothing of Nest): the same draws as its tests.
import { seededRandom } from '../../src/common/random';
import { type Child, stopChild } from '../support/processes';
import { answerStats, listenOnLoopback, startServerProcess } from '../support/server-process';
import { call } from '../support/service';

export const MODEL = 'gpt-4o-mini';
/** The assistant's answer, the content each client checks for. */
export const ANSWER_TEXT = 'Hello from the tail-at-scale model.';

/**
 * The upstream's latency: 4 % of answers 20× slower than the rest. Not 5 %: with independent
 * draws a run of 2,000 requests holds more than 5 % slow answers about half the time, and its
 * p95 (the hedge delay) would then be a slow answer's time.
 */
export const TAIL = { fastMs: 20, slowMs: 400, slowShare: 0.04, spread: 0.1 } as const;

export const COMPLETION_BODY = JSON.stringify({
  id: 'chatcmpl-bench-tail',
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
  usage: { prompt_tokens: 24, completion_tokens: 9, total_tokens: 33 },
});

export interface TailUpstreamStats {
  /** Requests received (every attempt the service made, hedges included). */
  requests: number;
  /** Answered 200. */
  answered: number;
  /** Closed by the caller before their answer: hedges that lost, or their first attempt. */
  cancelled: number;
  /** Answered 400: not JSON, no messages, or another model. */
  rejected: number;
  inFlight: number;
  /** Of `requests`, those that drew a slow time. */
  slow: number;
  /** CPU time (user + system) of the process so far, in µs. */
  cpuUs: number;
}

export interface TailUpstream {
  /** `<base>/v1`: what a provider takes as its base URL. */
  readonly baseUrl: string;
  readonly child: Child;
  stats(): Promise<TailUpstreamStats>;
  /** Counts to zero, the random started again from `seed`. */
  reset(seed: number): Promise<void>;
  stop(): Promise<void>;
}

const READY = 'TAIL_UPSTREAM_PORT';

export async function startTailUpstream(name = 'tail-upstream'): Promise<TailUpstream> {
  const { child, base } = await startServerProcess(name, __filename, READY);
  return {
    baseUrl: `${base}/v1`,
    child,
    stats: async () => JSON.parse((await call(`${base}/stats`)).text) as TailUpstreamStats,
    reset: async (seed) => {
      const answer = await call(`${base}/reset?seed=${seed}`, { method: 'POST' });
      if (answer.status !== 204) throw new Error(`the upstream's reset answered ${answer.status}`);
    },
    stop: () => stopChild(child),
  };
}

function serve(): void {
  const stats = { requests: 0, answered: 0, cancelled: 0, rejected: 0, inFlight: 0, slow: 0 };
  let random = seededRandom(1);
  const answer = Buffer.from(COMPLETION_BODY);
  const answerHeaders = { 'content-type': 'application/json', 'content-length': String(answer.length) };

  /** The next request's time: slow or fast, then spread evenly around it. */
  const draw = (): number => {
    const slow = random() < TAIL.slowShare;
    if (slow) stats.slow++;
    const ms = slow ? TAIL.slowMs : TAIL.fastMs;
    return ms * (1 - TAIL.spread + 2 * TAIL.spread * random());
  };

  const reject = (response: ServerResponse, message: string) => {
    stats.rejected++;
    response
      .writeHead(400, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code: null } }));
  };

  const complete = (request: IncomingMessage, response: ServerResponse) => {
    stats.requests++;
    stats.inFlight++;
    const ms = draw();
    let timer: NodeJS.Timeout | undefined;
    let answered = false;
    response.once('close', () => {
      stats.inFlight--;
      clearTimeout(timer);
      if (!answered) stats.cancelled++;
    });
    const chunks: Buffer[] = [];
    const receivedAt = performance.now();
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('end', () => {
      if (response.destroyed) return;
      let body: { model?: unknown; messages?: unknown };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
      } catch {
        answered = true;
        return reject(response, 'the body is not JSON');
      }
      if (!Array.isArray(body?.messages) || body.messages.length === 0 || body.model !== MODEL) {
        answered = true;
        return reject(response, 'no messages, or an unknown model');
      }
      // The drawn time counts from the request's arrival, reading it included.
      timer = setTimeout(
        () => {
          if (response.destroyed) return;
          answered = true;
          stats.answered++;
          response.writeHead(200, answerHeaders).end(answer);
        },
        Math.max(0, ms - (performance.now() - receivedAt)),
      );
    });
  };

  const server = createServer((request, response) => {
    if (request.method === 'POST' && request.url === '/v1/chat/completions') return complete(request, response);
    request.resume();
    const url = new URL(request.url ?? '/', 'http://upstream');
    if (request.method === 'POST' && url.pathname === '/reset') {
      random = seededRandom(Number(url.searchParams.get('seed') ?? 1));
      Object.assign(stats, { requests: 0, answered: 0, cancelled: 0, rejected: 0, slow: 0 });
      response.writeHead(204).end();
      return;
    }
    if (url.pathname === '/stats') return answerStats(response, stats);
    response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
  });
  listenOnLoopback(server, READY);
}

if (require.main === module) serve();
