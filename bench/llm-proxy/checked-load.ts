/**
 * autocannon runs whose every answer is checked: a 2xx counts only if its body holds every
 * expected substring. A run of bench/support/load.ts without `verifyBody` times answers by
 * status alone; a proxy that answered 200 with an error, or with the wrong answer, would look
 * fast there.
 *
 * autocannon keeps each answer's body as a string whatever the options, so the check adds a
 * few `includes` per answer to the load generator's work, the same on every side.
 */
import { type LoadResult, runLoad } from '../support/load';

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

/** `connections` connections POSTing `body` to `url` for `durationS` seconds. */
export async function runCheckedLoad(options: CheckedLoadOptions): Promise<CheckedLoadResult> {
  const { expect, ...load } = options;
  let firstMismatch: string | undefined;
  const result = await runLoad({
    ...load,
    verifyBody: (text) => {
      const matches = expect.every((part) => text.includes(part));
      if (!matches) firstMismatch ??= text.slice(0, 500);
      return matches;
    },
  });
  return { ...result, mismatches: result.mismatches ?? 0, wrong2xx: result.wrong2xx ?? 0, firstMismatch };
}
