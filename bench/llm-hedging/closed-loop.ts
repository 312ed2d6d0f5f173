/**
 * Closed-loop clients for the chat-route benchmarks (hedging, routing): `clients` loops, each
 * with one request in flight on a keep-alive connection of its own, until `requests` were sent
 * (or the time cap passed). Every request is its own (`body(index)`), every answer is read
 * whole, checked, and timed from before the request to its last byte.
 */
import { Pool } from 'undici';
import { onCleanup } from '../support/processes';
import type { ApiKey, Service } from '../support/service';
import { option } from '../support/options';

export interface ClosedLoopOptions {
  /** The endpoint, `http://host:port/path`. */
  url: string;
  headers: Record<string, string>;
  clients: number;
  /** Requests in all, across the clients. */
  requests: number;
  /** The body of the request numbered `index` (0 to `requests` - 1). */
  body(index: number): string;
  /** A substring every answer's body must hold. */
  expect: string;
  /** No request starts after this long; one in flight then still ends (or times out). */
  maxDurationMs: number;
  /** One request's limit, for its headers and then its body. @default 10000 */
  timeoutMs?: number;
}

export interface ClosedLoopResult {
  /** Requests sent; fewer than asked only if the time cap passed. */
  sent: number;
  /** 200 answers that held the expected text and said whether they were hedged. */
  ok: number;
  /** Client-observed time of every `ok` answer, in ms, ascending. */
  latenciesMs: number[];
  /** Of `ok`, the answers with `x-bulkhead-hedged: true`. */
  hedged: number;
  /** Answers by HTTP status (0: no answer, a connection error or a timeout). */
  statuses: Record<string, number>;
  /** Requests that were not `ok`: another status, another body, no hedged header, an error. */
  failed: number;
  /** What the first of those was, cut short. */
  firstFailure?: string;
  /** From the first request to the last answer, in s. */
  durationS: number;
}

export async function runClosedLoop(options: ClosedLoopOptions): Promise<ClosedLoopResult> {
  const { url, headers, clients, requests, expect, maxDurationMs, timeoutMs = 10_000 } = options;
  const { origin, pathname } = new URL(url);
  const pool = new Pool(origin, { connections: clients, pipelining: 1 });
  const forget = onCleanup(() => pool.destroy());
  const result: ClosedLoopResult = {
    sent: 0,
    ok: 0,
    latenciesMs: [],
    hedged: 0,
    statuses: {},
    failed: 0,
    durationS: 0,
  };
  const fail = (why: string) => {
    result.failed++;
    result.firstFailure ??= why.slice(0, 500);
  };
  const started = performance.now();
  const stopAt = started + maxDurationMs;
  let next = 0;

  const loop = async () => {
    while (next < requests && performance.now() < stopAt) {
      const index = next++;
      result.sent++;
      const sentAt = performance.now();
      try {
        const answer = await pool.request({
          path: pathname,
          method: 'POST',
          headers,
          body: options.body(index),
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
        const text = await answer.body.text();
        const ms = performance.now() - sentAt;
        result.statuses[answer.statusCode] = (result.statuses[answer.statusCode] ?? 0) + 1;
        const hedged = answer.headers['x-bulkhead-hedged'];
        if (answer.statusCode !== 200) fail(`${answer.statusCode} ${text}`);
        else if (!text.includes(expect)) fail(`200 without ${expect}: ${text}`);
        else if (hedged !== 'true' && hedged !== 'false') fail(`200 with x-bulkhead-hedged ${String(hedged)}`);
        else {
          result.ok++;
          result.latenciesMs.push(ms);
          if (hedged === 'true') result.hedged++;
        }
      } catch (error) {
        result.statuses[0] = (result.statuses[0] ?? 0) + 1;
        fail(`no answer: ${(error as Error).message}`);
      }
    }
  };

  try {
    await Promise.all(Array.from({ length: clients }, loop));
  } finally {
    forget();
    await pool.close();
  }
  result.durationS = (performance.now() - started) / 1_000;
  result.latenciesMs.sort((a, b) => a - b);
  return result;
}

/** What a run of a chat-route benchmark is given: its load, its warm-up, its seed and time cap. */
export interface RunSettings {
  clients: number;
  requests: number;
  warmUpRequests: number;
  seed: number;
  maxDurationMs: number;
}

/**
 * A chat-route benchmark's settings from its command line: `--requests` (default 2,000),
 * `--clients` (16) and `--seed` (`defaultSeed`); a tenth of the requests warm up first.
 * `--quick`: 200 requests from 8 clients, no warm-up. A run may take 30 s, far above what one
 * takes (2,000 requests from 16 clients at ~200/s: 10 s).
 */
export function chatRunSettings(defaultSeed: number): RunSettings & { quick: boolean } {
  const quick = process.argv.includes('--quick');
  const requests = quick ? 200 : option('requests', 2_000, 100);
  return {
    quick,
    requests,
    clients: quick ? 8 : option('clients', 16, 1),
    warmUpRequests: quick ? 0 : Math.round(requests / 10),
    seed: option('seed', defaultSeed, 0),
    maxDurationMs: 30_000,
  };
}

/** A closed-loop load of `service`'s chat route: the run named `run`, its answers checked for `answerText`. */
export type ChatLoad = (run: string, clients: number, requests: number) => Promise<ClosedLoopResult>;

/**
 * The load of a chat-route benchmark's run `name` on `service` (the hedging and the routing
 * benchmarks'), after one request alone, which must be answered right, and the warm-up.
 */
export async function warmedChatLoad(
  service: Service,
  key: ApiKey,
  s: RunSettings,
  name: string,
  requestBody: (run: string, index: number) => string,
  answerText: string,
): Promise<ChatLoad> {
  const load: ChatLoad = (run, clients, requests) =>
    runClosedLoop({
      url: service.url('/v1/chat/completions'),
      headers: key.headers,
      clients,
      requests,
      body: (index) => requestBody(run, index),
      expect: `"content":"${answerText}"`,
      maxDurationMs: s.maxDurationMs,
    });
  const probe = await load(`${name}-probe`, 1, 1);
  if (probe.ok !== 1) throw new Error(`the ${name} service's first answer was wrong: ${probe.firstFailure}`);
  if (s.warmUpRequests > 0) await load(`${name}-warm-up`, s.clients, s.warmUpRequests);
  return load;
}
