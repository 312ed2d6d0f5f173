/**
 * N tenants for the scale benchmark, and the service's config for them: an API key each (the
 * config holds its SHA-256, as `auth.apiKeys` must), a rate limit and a budget of its own
 * (`rateLimits.tenants`, `budgets.tenants`), every call of the builtin `echo` tool in one lane.
 */
import { hash, randomBytes } from 'node:crypto';
import { POLICY_LANE } from '../support/bare-app';

/** The lane of the echo tool, and the tool. */
export const TOOL_LANE = 'tools';
export const TOOL = 'echo';
export const ECHO_COST_USD = 0.000001;
/** Far above what a run can use: every call is decided, none refused. */
const RPM = 10_000_000;
const TPM = 1_000_000_000;
const CAP_USD = 1_000;

export interface Tenants {
  readonly count: number;
  /** The n-th tenant's name (n from 0). */
  name(n: number): string;
  /** `authorization` (the n-th tenant's key) and `content-type: application/json`. */
  headers(n: number): Record<string, string>;
  /** The `auth.apiKeys` entries. */
  readonly apiKeys: ReadonlyArray<{ sha256: string; tenant: string }>;
}

/** `count` tenants with fresh random keys (SHA-256 of each for the config). */
export function makeTenants(count: number): Tenants {
  const run = randomBytes(8).toString('hex');
  const names: string[] = [];
  const headers: Array<Record<string, string>> = [];
  const apiKeys: Array<{ sha256: string; tenant: string }> = [];
  for (let n = 0; n < count; n++) {
    const tenant = `t${n}`;
    const key = `scale-${run}-${n}`;
    names.push(tenant);
    headers.push(Object.freeze({ authorization: `Bearer ${key}`, 'content-type': 'application/json' }));
    apiKeys.push({ sha256: hash('sha256', key, 'hex'), tenant });
  }
  return {
    count,
    name: (n) => names[n % count]!,
    headers: (n) => headers[n % count]!,
    apiKeys,
  };
}

/**
 * The service's config for `tenants` on `store`: every tenant with a rate limit (rpm and tpm)
 * and a budget of its own; the echo tool (it costs $0.000001 and one token a call) in a lane
 * with a fair queue across tenants. The lane `routes` is the bench app's decorated route's.
 */
export function tenantsConfig(tenants: Tenants, store: object) {
  const rateLimits: Record<string, { rpm: number; tpm: number }> = {};
  const budgets: Record<string, number> = {};
  for (let n = 0; n < tenants.count; n++) {
    rateLimits[tenants.name(n)] = { rpm: RPM, tpm: TPM };
    budgets[tenants.name(n)] = CAP_USD;
  }
  return {
    server: { shutdownDrainMs: 1_000 },
    auth: { allowAnonymous: false, apiKeys: tenants.apiKeys },
    store,
    lanes: {
      [TOOL_LANE]: { concurrency: 64, queueCapacity: 1_024, maxQueuedPerTenant: 64 },
      [POLICY_LANE]: { concurrency: 8, queueCapacity: 8 },
    },
    tools: { [TOOL]: { kind: 'builtin', builtin: 'echo', lane: TOOL_LANE, costUsd: ECHO_COST_USD, tokens: 1 } },
    rateLimits: { default: { rpm: RPM, tpm: TPM }, tenants: rateLimits },
    budgets: { defaultUsd: CAP_USD, tenants: budgets },
  };
}
