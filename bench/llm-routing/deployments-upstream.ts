/**
 * Two deployments of one model, for the routing benchmark, in a process of its own on loopback:
 * `fast` and `slow`, the slow one {@link DEPLOYMENTS}' `slowFactor` times slower. Each is a model
 * server with `slots` requests in work at once (a GPU's batch) and a queue in arrival order
 * beyond them, so a deployment given more than its share answers later, as a real one does. A
 * request's work time is drawn from a seeded random (± `spread`) in the order requests arrive.
 * Routes:
 *   POST /<fast|slow>/v1/chat/completions  reads the body as a provider would (JSON with
 *                                          `messages`); after its queue and work time, 200 with
 *                                          {@link COMPLETION_BODY}; a caller that leaves first
 *                                          gets nothing (counted `cancelled`); bad JSON 400
 *   POST /reset?seed=N                     every count to zero, the random started again
 *   GET  /stats                            the counts, per deployment and summed
 * Anything else is 404.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { seededRandom } from '../../src/common/random';
import type { Child } from '../support/processes';
import { answerStats, listenOnLoopback, startServerProcess } from '../support/server-process';
import { call } from '../support/service';

export const ANSWER_TEXT = 'Hello from one of two deployments.';

/** The fast deployment's work time; the slow one's is `slowFactor` times it. */
export const DEPLOYMENTS = { fastMs: 20, slowFactor: 3, slots: 4, spread: 0.1 } as const;

export type DeploymentName = 'fast' | 'slow';
export const DEPLOYMENT_NAMES: readonly DeploymentName[] = ['fast', 'slow'];

export const COMPLETION_BODY = JSON.stringify({
  id: 'chatcmpl-bench-routing',
  object: 'chat.completion',
  created: 1_764_547_200,
  model: 'gpt-4o-mini-2024-07-18',
  choices: [{ index: 0, message: { role: 'assistant', content: ANSWER_TEXT }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 24, completion_tokens: 9, total_tokens: 33 },
});

export interface DeploymentStats {
  requests: number;
  answered: number;
  cancelled: number;
  rejected: number;
  inFlight: number;
  /** The most requests it held at once (in work and queued). */
  peakInFlight: number;
}

export interface UpstreamStats extends DeploymentStats {
  byDeployment: Record<DeploymentName, DeploymentStats>;
  cpuUs: number;
}

export interface DeploymentsUpstream {
  /** `<base>/<name>/v1`: what a provider takes as its base URL. */
  baseUrl(name: DeploymentName): string;
  readonly child: Child;
  stats(): Promise<UpstreamStats>;
  reset(seed: number): Promise<void>;
}

const READY = 'DEPLOYMENTS_UPSTREAM_PORT';

export async function startDeploymentsUpstream(name = 'deployments-upstream'): Promise<DeploymentsUpstream> {
  const { child, base } = await startServerProcess(name, __filename, READY);
  return {
    baseUrl: (deployment) => `${base}/${deployment}/v1`,
    child,
    stats: async () => JSON.parse((await call(`${base}/stats`)).text) as UpstreamStats,
    reset: async (seed) => {
      const answer = await call(`${base}/reset?seed=${seed}`, { method: 'POST' });
      if (answer.status !== 204) throw new Error(`the upstream's reset answered ${answer.status}`);
    },
  };
}

/** One deployment: `slots` requests in work, the rest waiting in arrival order. */
class Deployment {
  readonly stats: DeploymentStats = {
    requests: 0,
    answered: 0,
    cancelled: 0,
    rejected: 0,
    inFlight: 0,
    peakInFlight: 0,
  };
  private working = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly workMs: number) {}

  reset(): void {
    Object.assign(this.stats, {
      requests: 0,
      answered: 0,
      cancelled: 0,
      rejected: 0,
      peakInFlight: this.stats.inFlight,
    });
  }

  /** Runs `work` once a slot is free; `done` frees it. */
  admit(work: (done: () => void) => void): void {
    const start = () => {
      this.working++;
      work(() => {
        this.working--;
        this.waiting.shift()?.();
      });
    };
    if (this.working < DEPLOYMENTS.slots) start();
    else this.waiting.push(start);
  }
}

function serve(): void {
  const deployments: Record<DeploymentName, Deployment> = {
    fast: new Deployment(DEPLOYMENTS.fastMs),
    slow: new Deployment(DEPLOYMENTS.fastMs * DEPLOYMENTS.slowFactor),
  };
  let random = seededRandom(1);
  const answer = Buffer.from(COMPLETION_BODY);
  const answerHeaders = { 'content-type': 'application/json', 'content-length': String(answer.length) };

  const complete = (deployment: Deployment, request: IncomingMessage, response: ServerResponse) => {
    const { stats } = deployment;
    stats.requests++;
    stats.inFlight++;
    stats.peakInFlight = Math.max(stats.peakInFlight, stats.inFlight);
    const workMs = deployment.workMs * (1 - DEPLOYMENTS.spread + 2 * DEPLOYMENTS.spread * random());
    let answered = false;
    let timer: NodeJS.Timeout | undefined;
    let free: (() => void) | undefined;
    response.once('close', () => {
      stats.inFlight--;
      clearTimeout(timer);
      free?.();
      free = undefined;
      if (!answered) stats.cancelled++;
    });
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('end', () => {
      if (response.destroyed) return;
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messages?: unknown };
        if (!Array.isArray(body.messages)) throw new Error('no messages');
      } catch {
        answered = true;
        stats.rejected++;
        response.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"bad request"}}');
        return;
      }
      deployment.admit((done) => {
        if (response.destroyed) return done();
        free = done;
        timer = setTimeout(() => {
          answered = true;
          stats.answered++;
          response.writeHead(200, answerHeaders).end(answer);
          free?.();
          free = undefined;
        }, workMs);
      });
    });
  };

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://upstream');
    const [, name, ...rest] = url.pathname.split('/');
    const deployment = deployments[name as DeploymentName];
    if (request.method === 'POST' && deployment && rest.join('/') === 'v1/chat/completions') {
      return complete(deployment, request, response);
    }
    request.resume();
    if (request.method === 'POST' && url.pathname === '/reset') {
      random = seededRandom(Number(url.searchParams.get('seed') ?? 1));
      for (const each of Object.values(deployments)) each.reset();
      response.writeHead(204).end();
      return;
    }
    if (url.pathname === '/stats') {
      const byDeployment = { fast: deployments.fast.stats, slow: deployments.slow.stats };
      const sum = (key: keyof DeploymentStats) => byDeployment.fast[key] + byDeployment.slow[key];
      return answerStats(response, {
        requests: sum('requests'),
        answered: sum('answered'),
        cancelled: sum('cancelled'),
        rejected: sum('rejected'),
        inFlight: sum('inFlight'),
        peakInFlight: sum('peakInFlight'),
        byDeployment,
      });
    }
    response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
  });
  listenOnLoopback(server, READY);
}

if (require.main === module) serve();
