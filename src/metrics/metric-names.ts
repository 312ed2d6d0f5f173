/** Every metric name of docs/http-contract.md section 8, in one place. */
export const METRIC = {
  laneActive: 'bulkhead_lane_active',
  laneWaiting: 'bulkhead_lane_waiting',
  lanePeakActive: 'bulkhead_lane_peak_active',
  laneCapacity: 'bulkhead_lane_capacity',
  admissions: 'bulkhead_admissions_total',
  queueWait: 'bulkhead_queue_wait_seconds',
  cancellations: 'bulkhead_cancellations_total',
  calls: 'bulkhead_calls_total',
  callDuration: 'bulkhead_call_duration_seconds',
  retries: 'bulkhead_retries_total',
  idempotentReplays: 'bulkhead_idempotent_replays_total',
  circuitState: 'bulkhead_circuit_state',
  circuitTransitions: 'bulkhead_circuit_transitions_total',
  circuitTenantsOpen: 'bulkhead_circuit_tenants_open',
  circuitTenantOpens: 'bulkhead_circuit_tenant_opens_total',
  circuitSlowCalls: 'bulkhead_circuit_slow_calls_total',
  circuitProbes: 'bulkhead_circuit_probes_total',
  containmentRoutes: 'bulkhead_containment_routes_total',
  httpPoolActive: 'bulkhead_http_pool_active',
  httpPoolPeak: 'bulkhead_http_pool_peak',
  rateLimited: 'bulkhead_rate_limited_total',
  rateLimitFailedOpen: 'bulkhead_rate_limit_failed_open_total',
  budgetSpent: 'bulkhead_budget_spent_usd_total',
  llmRequests: 'bulkhead_llm_requests_total',
  llmTokens: 'bulkhead_llm_tokens_total',
  llmCache: 'bulkhead_llm_cache_total',
  llmFailovers: 'bulkhead_llm_failovers_total',
  llmHedges: 'bulkhead_llm_hedges_total',
  llmTimeToFirstToken: 'bulkhead_llm_time_to_first_token_seconds',
  chaosInjected: 'bulkhead_chaos_injected_total',
} as const;

/** Seconds; the first bucket catches the calls that did not wait at all. */
export const QUEUE_WAIT_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
export const CALL_DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
