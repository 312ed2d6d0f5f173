/**
 * Load generators: autocannon (its programmatic API) for the measured calls, closed-loop
 * callers in a process of their own for background load (calls held open, refusals retried),
 * and `alternate` for A/B/A/B runs.
 */
import { createRequire } from 'node:module';
import { Agent, request as httpRequest, type ClientRequest } from 'node:http';
import { percentile } from './stats';
import { type Child, exitWithParent, onCleanup, startChild, stopChild, SWC_REGISTER, waitForLine } from './processes';

// ---------------------------------------------------------------------------------------------
// autocannon

export interface LoadOptions {
  url: string;
  /** Connections, each with one request in flight at a time. */
  connections: number;
  /** How long it runs; with `amount`, the most it may take. */
  durationS: number;
  /** Stop after this many requests instead (or at `durationS`, whichever comes first). */
  amount?: number;
  /** @default 'POST' */
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** A request not answered within this long counts as a timeout. @default 10 */
  timeoutS?: number;
  /**
   * Checks every answer's body (autocannon's `verifyBody`): a 2xx it refuses is left out of
   * `ok`, req/s and the percentiles, and counted in `wrong2xx`.
   */
  verifyBody?: (body: string) => boolean;
  /**
   * What the n-th request of the run changes (n from 0, counted over every connection): its
   * path (from the URL's by default) and its headers (in place of `headers`), so that successive
   * requests can come from other tenants or go to other tools. Each request is then built afresh,
   * which costs the load generator, not the server.
   */
  perRequest?: (n: number) => { path?: string; headers?: Record<string, string> };
}

export interface LoadResult {
  /** 2xx answers per second of the run. */
  reqPerS: number;
  /** Of the 2xx answers, from every response's own time in fractional ms. */
  p50Ms: number;
  p99Ms: number;
  /** 2xx answers. */
  ok: number;
  non2xx: number;
  /** Connection errors and timeouts (autocannon counts timeouts among errors). */
  errors: number;
  timeouts: number;
  /** Answers by HTTP status. */
  statuses: Record<string, number>;
  durationS: number;
  /** autocannon's own p99 of every answer, from its histogram in whole ms (for comparison). */
  autocannonP99Ms: number;
  /** With `verifyBody`: answers whose body it refused, 2xx or not. */
  mismatches?: number;
  /** With `verifyBody`: of those, the 2xx ones. */
  wrong2xx?: number;
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

// autocannon ships no types; this is the part of its API used here. Loaded on first use only,
// so a callers process does not pay for it.
let autocannon: Autocannon | undefined;

/** Runs `connections` connections against `url` for `durationS` seconds (or for `amount` requests). */
export function runLoad(options: LoadOptions): Promise<LoadResult> {
  autocannon ??= createRequire(__filename)('autocannon') as Autocannon;
  const {
    url,
    connections,
    durationS,
    amount,
    method = 'POST',
    headers = {},
    body,
    timeoutS = 10,
    verifyBody: accepts,
    perRequest,
  } = options;
  return new Promise((done, fail) => {
    const latencies: number[] = [];
    const statuses: Record<string, number> = {};
    const started = performance.now();
    // autocannon notices an `amount` is done on its next 1 s tick: such a run is timed by its last answer.
    let lastAnswer = started;
    let wrong2xx = 0;
    // autocannon emits `response` before it checks the body: the last 2xx time is held until
    // the check says whether it counts.
    let pendingMs: number | undefined;
    const verifyBody =
      accepts &&
      ((text: string) => {
        const matches = accepts(text);
        if (pendingMs !== undefined) {
          if (matches) latencies.push(pendingMs);
          else wrong2xx++;
          pendingMs = undefined;
        }
        return matches;
      });
    let sent = 0;
    const varied = perRequest && {
      requests: [
        {
          setupRequest: (request: { path: string; headers: Record<string, string> }) => {
            const { path, headers: own } = perRequest(sent++);
            if (path !== undefined) request.path = path;
            // A fresh object: autocannon adds its Content-Length to the one it is given.
            request.headers = { ...(own ?? headers) };
            return request;
          },
        },
      ],
    };
    const common = {
      url,
      method,
      headers,
      body,
      connections,
      timeout: timeoutS,
      ...(verifyBody && { verifyBody }),
      ...varied,
    };
    const instance = autocannon!(
      amount === undefined ? { ...common, duration: durationS } : { ...common, amount },
      (error, result) => {
        forget();
        clearTimeout(cap);
        if (error) return fail(error);
        latencies.sort((a, b) => a - b);
        const seconds = amount === undefined ? result.duration : (lastAnswer - started) / 1_000;
        done({
          reqPerS: latencies.length / seconds,
          p50Ms: percentile(latencies, 50),
          p99Ms: percentile(latencies, 99),
          ok: latencies.length,
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          statuses,
          durationS: seconds,
          autocannonP99Ms: result.latency.p99,
          ...(verifyBody && { mismatches: result.mismatches, wrong2xx }),
        });
      },
    );
    const forget = onCleanup(() => instance.stop());
    const cap = amount === undefined ? undefined : setTimeout(() => instance.stop(), durationS * 1_000);
    instance.on('response', (_client, status, _bytes, ms) => {
      statuses[status] = (statuses[status] ?? 0) + 1;
      const is2xx = status >= 200 && status < 300;
      if (verifyBody) pendingMs = is2xx ? ms : undefined;
      else if (is2xx) latencies.push(ms);
      lastAnswer = performance.now();
    });
  });
}

/** Runs A B A B ... `pairs` times; `run(pair)` gets the pair's number from 1. */
export async function alternate<T>(
  aRun: (pair: number) => Promise<T>,
  bRun: (pair: number) => Promise<T>,
  pairs: number,
): Promise<{ a: T[]; b: T[] }> {
  const a: T[] = [];
  const b: T[] = [];
  for (let pair = 1; pair <= pairs; pair++) {
    a.push(await aRun(pair));
    b.push(await bRun(pair));
  }
  return { a, b };
}

// ---------------------------------------------------------------------------------------------
// Closed-loop callers

export interface CallersOptions {
  url: string;
  /** @default 'POST' */
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Loops, each with one call in flight at a time on a connection of its own. */
  callers: number;
  /** Wait after a 2xx before the next call. @default 0 */
  pauseAfterOkMs?: number;
  /**
   * Wait after any other answer (a refusal): a fixed time, or the answer's `Retry-After`
   * bounded to [minMs, maxMs] (`fallbackMs` without one), as a well-behaved client does.
   * @default { fixedMs: 100 }
   */
  pauseAfterRefusal?: { fixedMs: number } | { retryAfter: { minMs: number; maxMs: number; fallbackMs: number } };
  /** Wait after a connection error. @default 200 */
  pauseAfterErrorMs?: number;
  /** Keep each caller's connection open between calls; otherwise one connection per call. @default false */
  keepAlive?: boolean;
}

export interface CallersStats {
  /** Answers by HTTP status (a call held open has none until it ends). */
  answered: Record<string, number>;
  /** Connection errors while running (not the calls cut by `stop()`). */
  errors: number;
  /** Calls in flight now. */
  open: number;
  /** CPU time (user + system) of the process the callers run in, so far, in µs. */
  cpuUs: number;
}

/** `callers` loops calling `url` in this process; see `startCallersProcess` for one of their own. */
export class Callers {
  private stopped = false;
  private readonly open = new Set<ClientRequest>();
  private readonly sleepers = new Set<() => void>();
  private readonly loops: Array<Promise<void>> = [];
  private readonly answered: Record<string, number> = {};
  private errors = 0;
  private readonly agent: Agent | false;

  constructor(private readonly options: CallersOptions) {
    this.agent = options.keepAlive ? new Agent({ keepAlive: true, maxSockets: options.callers }) : false;
    for (let n = 0; n < options.callers; n++) this.loops.push(this.loop());
  }

  stats(): CallersStats {
    return { answered: { ...this.answered }, errors: this.errors, open: this.open.size, cpuUs: cpuUs() };
  }

  /** Closes every call in flight (the service sees its callers leave) and ends the loops. */
  async stop(): Promise<CallersStats> {
    this.stopped = true;
    for (const request of this.open) request.destroy();
    for (const wake of this.sleepers) wake();
    await Promise.all(this.loops);
    if (this.agent) this.agent.destroy();
    return this.stats();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const pauseMs = await this.once();
      if (!this.stopped && pauseMs > 0) await this.sleep(pauseMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((wake) => {
      const done = () => {
        clearTimeout(timer);
        this.sleepers.delete(done);
        wake();
      };
      const timer = setTimeout(done, ms);
      this.sleepers.add(done);
    });
  }

  /** One call; resolves with how long to wait before the next. */
  private once(): Promise<number> {
    const { url, method = 'POST', headers = {}, body, pauseAfterOkMs = 0, pauseAfterErrorMs = 200 } = this.options;
    const refusal = this.options.pauseAfterRefusal ?? { fixedMs: 100 };
    return new Promise((done) => {
      const request = httpRequest(url, { method, headers, agent: this.agent }, (response) => {
        const status = response.statusCode ?? 0;
        this.answered[status] = (this.answered[status] ?? 0) + 1;
        let pauseMs = pauseAfterOkMs;
        if (status < 200 || status >= 300) {
          if ('fixedMs' in refusal) pauseMs = refusal.fixedMs;
          else {
            const { minMs, maxMs, fallbackMs } = refusal.retryAfter;
            const retryAfterS = Number(response.headers['retry-after']);
            pauseMs = Number.isFinite(retryAfterS) ? Math.min(maxMs, Math.max(minMs, retryAfterS * 1_000)) : fallbackMs;
          }
        }
        response.resume();
        response.on('close', () => {
          this.open.delete(request);
          done(pauseMs);
        });
      });
      request.on('error', () => {
        this.open.delete(request);
        if (!this.stopped) this.errors++;
        done(pauseAfterErrorMs);
      });
      this.open.add(request);
      request.end(body);
    });
  }
}

export interface CallersProcess {
  readonly pid: number | undefined;
  /** Starts a group of callers (one group at a time). */
  start(options: CallersOptions): Promise<void>;
  stats(): Promise<CallersStats>;
  /** Stops the group: every call in flight is closed; resolves with its final counts. */
  stop(): Promise<CallersStats>;
  /** Ends the process. */
  close(): Promise<void>;
}

type Message = { type: 'start'; options: CallersOptions } | { type: 'stats' } | { type: 'stop' };
type Request = Message & { id: number };
interface Reply {
  id: number;
  stats?: CallersStats;
  error?: string;
}

/** A process of its own for background callers, so their work is not in the measuring loop. */
export async function startCallersProcess(name = 'callers'): Promise<CallersProcess> {
  const child: Child = startChild(name, ['-r', SWC_REGISTER, __filename, '--callers'], { ipc: true });
  await waitForLine(child, /CALLERS_READY/, 15_000);
  let nextId = 0;
  const pending = new Map<number, (reply: Reply) => void>();
  child.process.on('message', (reply: Reply) => pending.get(reply.id)?.(reply));
  void child.exited.then(() => {
    for (const answer of pending.values()) answer({ id: -1, error: `${name} ended` });
  });
  const ask = (request: Message) =>
    new Promise<CallersStats>((done, fail) => {
      const id = ++nextId;
      pending.set(id, (reply) => {
        pending.delete(id);
        if (reply.error) fail(new Error(`${name}: ${reply.error}`));
        else done(reply.stats!);
      });
      child.process.send({ ...request, id });
    });
  return {
    pid: child.process.pid,
    start: async (options) => void (await ask({ type: 'start', options })),
    stats: () => ask({ type: 'stats' }),
    stop: () => ask({ type: 'stop' }),
    close: () => stopChild(child),
  };
}

function cpuUs(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

function serveCallers(): void {
  let current: Callers | undefined;
  const empty = (): CallersStats => ({ answered: {}, errors: 0, open: 0, cpuUs: cpuUs() });
  process.on('message', (request: Request) => {
    const reply = (answer: Omit<Reply, 'id'>) => process.send!({ ...answer, id: request.id });
    switch (request.type) {
      case 'start':
        if (current) return reply({ error: 'a group of callers is already running' });
        current = new Callers(request.options);
        return reply({ stats: current.stats() });
      case 'stats':
        return reply({ stats: current?.stats() ?? empty() });
      case 'stop': {
        const stopping = current;
        current = undefined;
        if (!stopping) return reply({ stats: empty() });
        void stopping.stop().then((stats) => reply({ stats }));
        return;
      }
    }
  });
  process.on('disconnect', () => process.exit(0));
  exitWithParent();
  process.stdout.write('CALLERS_READY\n');
}

if (require.main === module && process.argv.includes('--callers')) serveCallers();
