/**
 * The scale benchmark's servers with N tenants: the service's app as built (bench/support/bare-app.ts
 * `--app`, its config handed over as JSON, the way a host app hands its own: the YAML file of
 * `node dist/main.js` takes minutes to read with 100,000 tenants, see bench/scale.ts), one per
 * tenant count and store; and what each counted.
 */
import { parsePromText, type PromText } from '../../test/support/prom-text';
import { type BenchApp, startBenchApp } from '../support/bare-app';
import { cpuSecondsOf } from '../support/cpu';
import { metricSum } from '../support/metric-sum';
import { call } from '../support/service';
import { counted, type Side } from './calls';
import { makeTenants, type Tenants, tenantsConfig, TOOL } from './tenants';

/** Starting an app with 100,000 tenants takes a few seconds; with room for a loaded machine. */
const START_TIMEOUT_MS = 60_000;

export interface TenantSide extends Side {
  readonly app: BenchApp;
  readonly tenants: Tenants;
  /** From spawning the process to its `listening` line, ms. */
  readonly startMs: number;
  /** The CPU time the process spent until it listened (from /proc), s. */
  readonly startCpuS: number;
  /** `nodejs_heap_size_used_bytes` right after the start (no call yet; no forced GC). */
  readonly heapAtStartBytes: number;
}

/** Starts the app with `count` tenants on `store` (the config's `store`); `label` names the store. */
export async function startTenantSide(count: number, label: string, store: object): Promise<TenantSide> {
  const tenants = makeTenants(count);
  const config = tenantsConfig(tenants, store);
  const started = performance.now();
  const app = await startBenchApp('app', config, {
    name: `app (${label}, ${count} tenants)`,
    startTimeoutMs: START_TIMEOUT_MS,
  });
  const startMs = performance.now() - started;
  const startCpuS = cpuSecondsOf(app.child.process.pid);
  const metrics = parsePromText((await call(app.url('/metrics'))).text);
  return {
    name: `${label}, ${counted(count, 'tenant')}`,
    count,
    base: app.base,
    app,
    tenants,
    startMs,
    startCpuS,
    heapAtStartBytes: metricSum(metrics, 'nodejs_heap_size_used_bytes'),
    request: (n) => ({ path: `/v1/tools/${TOOL}/invoke`, headers: tenants.headers(n) }),
    cpuUs: () => app.cpuUs(),
  };
}

/**
 * What the side counted, checked against what was answered: every answered call ok in
 * `bulkhead_calls_total` and, after one call of every tenant, a budget charge for every tenant;
 * no rate-limit decision failed open, no call went to the isolated pool. Problems go into
 * `problems`.
 */
export function checkTenantSide(side: TenantSide, metrics: PromText, answered: number, problems: string[]) {
  const ok = metricSum(metrics, 'bulkhead_calls_total', { tool: TOOL, outcome: 'ok' });
  const charged = metrics.samples.filter(
    (sample) => sample.name === 'bulkhead_budget_spent_usd_total' && sample.value > 0,
  ).length;
  const failedOpen = metricSum(metrics, 'bulkhead_rate_limit_failed_open_total');
  const isolated = metricSum(metrics, 'bulkhead_containment_routes_total', { pool: 'isolated' });
  if (ok < answered) problems.push(`${side.name}: ${ok} echo calls ok in the metrics, < ${answered} answered`);
  if (charged !== side.count) problems.push(`${side.name}: ${charged} tenants charged, not ${side.count}`);
  if (failedOpen > 0) problems.push(`${side.name}: ${failedOpen} rate-limit decisions failed open`);
  if (isolated > 0) problems.push(`${side.name}: ${isolated} calls routed to the isolated pool`);
  return { ok, charged, failedOpen, isolated };
}
