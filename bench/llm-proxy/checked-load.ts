/**
 * autocannon runs whose every answer is checked: a 2xx counts only if its body holds every
 * expected substring. bench/support/load.ts times answers by status alone; a proxy that
 * answered 200 with an error, or with the wrong answer, would look fast there.
 *
 * autocannon keeps each answer's body as a string whatever the options, so the check adds a
 * few `includes` per answer to the load generator's work, the same on every side.
 */
import { createRequire } from 'node:module';
import type { LoadResult } from '../support/load';
import { onCleanup } from '../support/processes';
import { percentile } from '../support/stats';

export interface CheckedLoadOptions {
  url: string;
  headers: Record<string, string>;
  body: string;
  connections: number;
  durationS: number;
  /** Substrings every answer's body must hold. */
  expect: readonly string[];
}

export interface CheckedLoadResult extends LoadResult {
  /** Answers whose body lacked an expected substring, 2xx or not. */
  mismatches: number;
  /** Of those, the 2xx ones (left out of `ok`, req/s and the percentiles). */
  wrong2xx: number;
  /** The first body that did not match, cut short. */
  firstMismatch?: string;
}

interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  mismatches: number;
  latency: { p99: number };
}

interface AutocannonInstance {
  on(event: 'response', listener: (client: unknown, status: number, bytes: number, ms: number) => void): void;
  stop(): void;
}

type Autocannon = (
  options: Record<string, unknown>,
  done: (error: Error | null, result: AutocannonResult) => void,
) => AutocannonInstance;

let autocannon: Autocannon | undefined;

/** `connections` connections POSTing `body` to `url` for `durationS` seconds. */
export function runCheckedLoad(options: CheckedLoadOptions): Promise<CheckedLoadResult> {
  autocannon ??= createRequire(__filename)('autocannon') as Autocannon;
  const { url, headers, body, connections, durationS, expect } = options;
  return new Promise((done, fail) => {
    const latencies: number[] = [];
    const statuses: Record<string, number> = {};
    let wrong2xx = 0;
    let firstMismatch: string | undefined;
    // autocannon emits `response` before it checks the body: the last 2xx time is held until
    // the check says whether it counts.
    let pendingMs: number | undefined;
    const verifyBody = (text: string) => {
      const matches = expect.every((part) => text.includes(part));
      if (pendingMs !== undefined) {
        if (matches) latencies.push(pendingMs);
        else wrong2xx++;
        pendingMs = undefined;
      }
      if (!matches) firstMismatch ??= text.slice(0, 500);
      return matches;
    };
    const instance = autocannon!(
      { url, method: 'POST', headers, body, connections, duration: durationS, timeout: 10, verifyBody },
      (error, result) => {
        forget();
        if (error) return fail(error);
        latencies.sort((a, b) => a - b);
        done({
          reqPerS: latencies.length / result.duration,
          p50Ms: percentile(latencies, 50),
          p99Ms: percentile(latencies, 99),
          ok: latencies.length,
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          statuses,
          durationS: result.duration,
          autocannonP99Ms: result.latency.p99,
          mismatches: result.mismatches,
          wrong2xx,
          firstMismatch,
        });
      },
    );
    const forget = onCleanup(() => instance.stop());
    instance.on('response', (_client, status, _bytes, ms) => {
      statuses[status] = (statuses[status] ?? 0) + 1;
      pendingMs = status >= 200 && status < 300 ? ms : undefined;
    });
  });
}
