/**
 * The streaming benchmark's client: undici requests whose SSE body is read as it arrives, each
 * stream timed to its first content chunk and to its end, and checked whole: 200
 * `text/event-stream`, every content chunk in order, the finish and usage chunks, `data: [DONE]`
 * last. A bounded number of streams, `concurrency` at a time, each on a keep-alive connection.
 */
import { Pool } from 'undici';
import { onCleanup } from '../support/processes';
import { StreamCheck } from './stream-check';

export interface StreamsOptions {
  /** The endpoint, `http://host:port/path`. */
  url: string;
  headers: Record<string, string>;
  /** The body of stream `index` (0 to `streams` - 1). */
  body(index: number): string;
  streams: number;
  concurrency: number;
  /** No stream starts after this long; one in flight then still ends (or times out). */
  maxDurationMs: number;
  /** One stream's limit for its headers, and then between two pieces of its body. @default 10000 */
  timeoutMs?: number;
}

export interface StreamsResult {
  /** Streams started; fewer than asked only if the time cap passed. */
  sent: number;
  /** Streams that arrived whole and right. */
  ok: number;
  /** Of the `ok` streams, ascending, in ms: from the request to its first content chunk... */
  ttftMs: number[];
  /** ...and to its end. */
  totalMs: number[];
  /** Streams that were not `ok`, and what the first of them was. */
  failed: number;
  firstFailure?: string;
  /** From the first request to the last stream's end, in s. */
  durationS: number;
}

/** What one stream was: right (`problem` undefined), or what was wrong. */
interface StreamOutcome {
  problem?: string;
  ttftMs: number;
  totalMs: number;
}

export async function runStreams(options: StreamsOptions): Promise<StreamsResult> {
  const { url, headers, streams, concurrency, maxDurationMs, timeoutMs = 10_000 } = options;
  const { origin, pathname } = new URL(url);
  const pool = new Pool(origin, { connections: concurrency, pipelining: 1 });
  const forget = onCleanup(() => pool.destroy());
  const result: StreamsResult = { sent: 0, ok: 0, ttftMs: [], totalMs: [], failed: 0, durationS: 0 };
  const started = performance.now();
  const stopAt = started + maxDurationMs;
  let next = 0;

  const loop = async () => {
    while (next < streams && performance.now() < stopAt) {
      const index = next++;
      result.sent++;
      const outcome = await readStream(pool, pathname, headers, options.body(index), timeoutMs);
      if (outcome.problem === undefined) {
        result.ok++;
        result.ttftMs.push(outcome.ttftMs);
        result.totalMs.push(outcome.totalMs);
      } else {
        result.failed++;
        result.firstFailure ??= outcome.problem.slice(0, 500);
      }
    }
  };

  try {
    await Promise.all(Array.from({ length: concurrency }, loop));
  } finally {
    forget();
    await pool.close();
  }
  result.durationS = (performance.now() - started) / 1_000;
  result.ttftMs.sort((a, b) => a - b);
  result.totalMs.sort((a, b) => a - b);
  return result;
}

/** One stream, read as it arrives and checked event by event. */
async function readStream(
  pool: Pool,
  path: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<StreamOutcome> {
  const sentAt = performance.now();
  const check = new StreamCheck();
  let ttftMs = Number.NaN;
  try {
    const answer = await pool.request({
      path,
      method: 'POST',
      headers,
      body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const type = String(answer.headers['content-type'] ?? '');
    if (answer.statusCode !== 200 || !type.startsWith('text/event-stream')) {
      return { problem: `${answer.statusCode} ${type}: ${await answer.body.text()}`, ttftMs, totalMs: Number.NaN };
    }
    answer.body.setEncoding('utf8');
    let pending = '';
    for await (const text of answer.body as AsyncIterable<string>) {
      const arrivedAt = performance.now();
      pending += text;
      let end: number;
      while ((end = pending.indexOf('\n\n')) !== -1) {
        const event = pending.slice(0, end);
        pending = pending.slice(end + 2);
        const contentBefore = check.content;
        check.event(event);
        if (contentBefore === 0 && check.content === 1) ttftMs = arrivedAt - sentAt;
      }
    }
    const problem = check.problem ?? check.incomplete(pending);
    return { problem, ttftMs, totalMs: performance.now() - sentAt };
  } catch (error) {
    return { problem: `no whole stream: ${(error as Error).message}`, ttftMs, totalMs: Number.NaN };
  }
}
