/**
 * One run of the routing benchmark: a service of its own whose route chooses between the two
 * deployments by `strategy`, checked with one request, warmed up, then the measured closed-loop
 * load; what the clients saw and what each deployment received, then the service stopped.
 */
import { type ClosedLoopResult, type RunSettings, warmedChatLoad } from '../llm-hedging/closed-loop';
import type { ApiKey } from '../support/service';
import { startService } from '../support/service';
import { untilQuiet } from '../support/until-quiet';
import {
  ANSWER_TEXT,
  DEPLOYMENT_NAMES,
  type DeploymentName,
  type DeploymentsUpstream,
  type DeploymentStats,
} from './deployments-upstream';

export type Strategy = 'ordered' | 'least-busy' | 'lowest-latency';

export type { RunSettings };

export interface MeasuredRun {
  strategy: Strategy;
  client: Omit<ClosedLoopResult, 'latenciesMs'>;
  /** Client-observed times of the good answers, ascending, in ms. */
  latenciesMs: number[];
  /** What each deployment received during the measured load. */
  deployments: Record<DeploymentName, DeploymentStats>;
  /** Held by the upstream once the run was over: must be 0. */
  upstreamInFlight: number;
}

const ROUTE = 'chat';
const LANE = 'llm';

/**
 * One API-key tenant; the route `chat` with the two deployments as its targets, the fast one
 * first (so `ordered` is "the preferred deployment, the other as a spare"), no retries beyond
 * the first attempt's, no hedging, no cache. The lane and the pool are far bigger than the load.
 */
function serviceConfig(upstream: DeploymentsUpstream, key: ApiKey, clients: number, strategy: Strategy) {
  return {
    auth: { allowAnonymous: false, apiKeys: [key.entry] },
    lanes: { [LANE]: { concurrency: 256, queueCapacity: 1024 } },
    containment: {
      pools: { normalMaxConcurrency: Math.max(64, 4 * clients) },
      egress: { allowHosts: ['127.0.0.1'], allowPrivateCidrs: ['127.0.0.0/8'] },
    },
    llm: {
      routes: {
        [ROUTE]: {
          lane: LANE,
          strategy,
          targets: DEPLOYMENT_NAMES.map((name) => ({
            provider: 'openai',
            model: `gpt-4o-mini-${name}`,
            baseUrl: upstream.baseUrl(name),
            apiKey: 'sk-bench-not-a-real-key',
          })),
          cache: false,
          timeoutMs: 10_000,
        },
      },
    },
  };
}

function requestBody(run: string, index: number): string {
  return JSON.stringify({
    model: ROUTE,
    messages: [{ role: 'user', content: `Question ${index} of the ${run} run: say hello.` }],
    user: `bench-${run}`,
  });
}

export async function measureRun(
  strategy: Strategy,
  upstream: DeploymentsUpstream,
  key: ApiKey,
  s: RunSettings,
): Promise<MeasuredRun> {
  const service = await startService(serviceConfig(upstream, key, s.clients, strategy), {
    name: `service-${strategy}`,
  });
  try {
    const load = await warmedChatLoad(service, key, s, strategy, requestBody, ANSWER_TEXT);

    await untilQuiet(() => upstream.stats());
    await upstream.reset(s.seed);
    const { latenciesMs, ...client } = await load(strategy, s.clients, s.requests);
    const after = await untilQuiet(() => upstream.stats());
    return { strategy, client, latenciesMs, deployments: after.byDeployment, upstreamInFlight: after.inFlight };
  } finally {
    await service.stop();
  }
}
