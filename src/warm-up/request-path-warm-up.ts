import { Pool } from 'undici';
import { LoopbackModel } from './loopback-model';
import { type WarmUpCall, warmUpCalls, warmUpDocument, warmUpKey } from './warm-up-calls';

/** An app the warm-up builds: listens on loopback, and is closed after. */
export interface WarmUpApp {
  listen(port: number, host: string): Promise<unknown>;
  getUrl(): Promise<string>;
  close(): Promise<void>;
}

export interface WarmUpOptions {
  /** How long the calls may run, at most; 0: no warm-up. */
  budgetMs: number;
  /** The service's app as main.ts builds it, from a config document instead of the file. */
  build: (document: Record<string, unknown>) => Promise<WarmUpApp>;
  /** Milliseconds from any origin: the budget is measured with it. */
  now: () => number;
}

export interface WarmUpReport {
  /** Calls answered as expected. */
  calls: number;
  /** Calls that were not: a sign the warm-up did not warm what it meant to. */
  failed: number;
  elapsedMs: number;
}

/** Calls in flight at once: enough to keep the one process busy while each waits on the next hop. */
const IN_FLIGHT = 4;
/** Past this many rounds the request path is warm (V8 optimises after 500 runs: src/tier-up-flag.ts). */
const MAX_ROUNDS = 700;

/**
 * Runs the service's request path hot before the service is ready: a throwaway app of the same
 * code (warm-up-calls.ts: its own memory store, key and tenant, a route to a loopback model in
 * this process) answers a few thousand requests over real connections, then is closed. V8
 * optimises a function by how often it ran, in any app of the process, so the service's first
 * real requests are served nearer warm speed, while nothing the service keeps (its stores,
 * metrics, money, logs) and no upstream ever sees the warm-up. Bounded by `budgetMs` (and
 * {@link MAX_ROUNDS}); a failure is its caller's to report, never fatal to the service.
 */
export async function warmUpRequestPath(options: WarmUpOptions): Promise<WarmUpReport> {
  const started = options.now();
  const report: WarmUpReport = { calls: 0, failed: 0, elapsedMs: 0 };
  if (options.budgetMs <= 0) return report;
  const model = await LoopbackModel.start();
  try {
    const key = warmUpKey();
    const app = await options.build(warmUpDocument(key, model.baseUrl));
    try {
      await app.listen(0, '127.0.0.1');
      // A pool's requests cost the process less than `fetch`'s: more of the budget goes to the service's side.
      const pool = new Pool((await app.getUrl()).replace('[::1]', '127.0.0.1'), { connections: IN_FLIGHT });
      const deadline = started + options.budgetMs;
      let round = 0;
      // Each worker runs a round at least: every kind of call is served once, however slow the start.
      const worker = async () => {
        do {
          for (const call of warmUpCalls(round++, key)) {
            if (await served(pool, call)) report.calls++;
            else report.failed++;
          }
        } while (round < MAX_ROUNDS && options.now() < deadline);
      };
      try {
        await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
      } finally {
        await pool.destroy();
      }
    } finally {
      await app.close();
    }
  } finally {
    await model.close();
  }
  report.elapsedMs = options.now() - started;
  return report;
}

async function served(pool: Pool, call: WarmUpCall): Promise<boolean> {
  try {
    const answer = await pool.request({ method: 'POST', path: call.path, headers: call.headers, body: call.body });
    const text = await answer.body.text();
    return answer.statusCode === 200 && text.includes(call.expect);
  } catch {
    return false;
  }
}
