// The testing entry (package.json "exports": `nestjs-bulkhead/testing`): the contract suites our
// own stores pass, for a company that writes its own store to run against its implementation.
// The suites call jest's globals (describe, it, expect), so they load only inside a jest run:
// this entry is apart from the main one, which must never load them or jest.

import './supported-node';

// Time that moves only when a test says so; every suite hands one to the store it builds.
export { FakeClock } from './common/fake-clock';
// A store whose methods answer at once, seen as one whose methods answer promises.
export { promised, type Promised } from './common';

// One suite per store interface: describeXStore(name, makeStore, ...) runs the whole contract.
// The renew parts run inside the whole budget and idempotency suites too; alone, each takes the
// context those suites build (a fresh store and its clock, per test).
export { describeBudgetStore, type MakeBudgetStore } from './budget/budget-store.contract';
export { describeBudgetStoreRenew } from './budget/budget-store-renew.contract';
export type { BudgetContractContext } from './budget/budget-store-contract-context';
export {
  describeIdempotencyStore,
  type IdempotencyContractOptions,
  type MakeIdempotencyStore,
} from './idempotency/idempotency-store.contract';
export { describeIdempotencyStoreRenew } from './idempotency/idempotency-store-renew.contract';
export type { IdempotencyContractContext } from './idempotency/idempotency-store-contract-context';
export { describeRateLimitStore, type MakeRateLimitStore } from './rate-limit/rate-limit-store.contract';
export {
  describeLlmCacheStore,
  type LlmCacheContractOptions,
  type MakeLlmCacheStore,
} from './llm/cache/llm-cache-store.contract';
export { describeContainmentStore, type MakeContainmentStore } from './containment/containment-store.contract';
export { describeToolPinStore, type MakeToolPinStore } from './mcp-pinning/tool-pin-store.contract';
