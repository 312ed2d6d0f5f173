/**
 * One run of the hedging benchmark: a service of its own with the route hedging after
 * `hedgeAfterMs` (0: never), checked with one request, warmed up, then the measured closed-loop
 * load from a freshly seeded upstream; what the clients saw, what the upstream received and the
 * service's own counts of the run, then the service stopped.
 */
import { countsSince, metricBy } from '../support/metric-sum';
import type { ApiKey, Service } from '../support/service';
import { startService } from '../support/service';
import { untilQuiet } from '../support/until-quiet';
import { type ClosedLoopResult, type RunSettings, warmedChatLoad } from './closed-loop';
import { LANE, requestBody, ROUTE, serviceConfig } from './setup';
import { ANSWER_TEXT, type TailUpstream, type TailUpstreamStats } from './tail-upstream';

export type RunName = 'unhedged' | 'hedged';

export type { RunSettings };

export interface MeasuredRun {
  name: RunName;
  hedgeAfterMs: number;
  client: Omit<ClosedLoopResult, 'latenciesMs'>;
  /** Client-observed times of the good answers, ascending, in ms. */
  latenciesMs: number[];
  /** What the upstream received and did during the measured load. */
  upstream: Omit<TailUpstreamStats, 'cpuUs'>;
  /** `bulkhead_llm_hedges_total` of the route during the load, by result. */
  hedges: { won: number; lost: number };
  /** `bulkhead_llm_requests_total` during the load, by outcome (attempts, hedges included). */
  attempts: Record<string, number>;
  /** The route's lane once the upstream was idle: nothing may be left in it. */
  laneAfter: { active: number; waiting: number };
}

const HEDGES = 'bulkhead_llm_hedges_total';
const ATTEMPTS = 'bulkhead_llm_requests_total';

export async function measureRun(
  name: RunName,
  hedgeAfterMs: number,
  upstream: TailUpstream,
  key: ApiKey,
  s: RunSettings,
): Promise<MeasuredRun> {
  const service = await startService(serviceConfig(upstream, key, s.clients, hedgeAfterMs), {
    name: `service-${name}`,
  });
  try {
    const load = await warmedChatLoad(service, key, s, name, requestBody, ANSWER_TEXT);

    await untilQuiet(() => upstream.stats());
    await upstream.reset(s.seed);
    const before = await counts(service);
    const { latenciesMs, ...client } = await load(name, s.clients, s.requests);
    const { cpuUs: _cpuUs, ...received } = await untilQuiet(() => upstream.stats());
    const after = await counts(service);
    const lane = (await service.lanes(key.headers))[LANE];
    const hedges = countsSince(before.hedges, after.hedges);
    return {
      name,
      hedgeAfterMs,
      client,
      latenciesMs,
      upstream: received,
      hedges: { won: hedges.won ?? 0, lost: hedges.lost ?? 0 },
      attempts: countsSince(before.attempts, after.attempts),
      laneAfter: { active: lane?.active ?? Number.NaN, waiting: lane?.waiting ?? Number.NaN },
    };
  } finally {
    await service.stop();
  }
}

/** The route's hedges by result and its attempts by outcome, so far. */
async function counts(service: Service) {
  const metrics = await service.metrics();
  const ofRoute = { ...metrics, samples: metrics.samples.filter((sample) => sample.labels.route === ROUTE) };
  return { hedges: metricBy(ofRoute, HEDGES, 'result'), attempts: metricBy(ofRoute, ATTEMPTS, 'outcome') };
}
