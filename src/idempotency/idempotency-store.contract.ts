import { FakeClock } from '../common/fake-clock';
import type { IdempotencyBounds } from './idempotency-bounds';
import type { IdempotencyStore } from './idempotency.store';
import { describeIdempotencyStoreBound } from './idempotency-store-bound.contract';
import { describeIdempotencyStoreBytes } from './idempotency-store-bytes.contract';
import { describeIdempotencyStoreClaim } from './idempotency-store-claim.contract';
import { describeIdempotencyStoreComplete } from './idempotency-store-complete.contract';
import type { IdempotencyContractContext, IdempotencyContractOptions } from './idempotency-store-contract-context';
import { describeIdempotencyStoreLease } from './idempotency-store-lease.contract';
import { describeIdempotencyStoreRelease } from './idempotency-store-release.contract';
import { describeIdempotencyStoreRenew } from './idempotency-store-renew.contract';
import { describeIdempotencyStoreRetention } from './idempotency-store-retention.contract';

export type { IdempotencyContractOptions } from './idempotency-store-contract-context';

/** Builds the store under test on the given clock, within `bounds`. */
export type MakeIdempotencyStore = (
  clock: FakeClock,
  bounds: IdempotencyBounds,
) => IdempotencyStore | Promise<IdempotencyStore>;

/** Bounds no test without its own bounds comes near. */
const ROOMY: IdempotencyBounds = {
  maxEntries: 1_000,
  maxBytes: 64 * 1024 * 1024,
  maxBytesPerTenant: 64 * 1024 * 1024,
  maxEntryBytes: 16 * 1024 * 1024,
};

/**
 * The contract every {@link IdempotencyStore} keeps, asserted only through the interface and
 * with time moved only through the {@link FakeClock} handed to `makeStore`, so the same suite
 * runs against the memory store and against Redis. Each behaviour's tests are in a file of their own.
 */
export function describeIdempotencyStore(
  name: string,
  makeStore: MakeIdempotencyStore,
  options: IdempotencyContractOptions = {},
): void {
  describe(`IdempotencyStore contract: ${name}`, () => {
    let clock: FakeClock;

    beforeEach(() => {
      clock = new FakeClock();
    });

    const context: IdempotencyContractContext = {
      store: (bounds = {}) => Promise.resolve(makeStore(clock, { ...ROOMY, ...bounds })),
      clock: () => clock,
    };

    describeIdempotencyStoreClaim(context);
    describeIdempotencyStoreComplete(context);
    describeIdempotencyStoreRelease(context);
    describeIdempotencyStoreRetention(context);
    describeIdempotencyStoreLease(context);
    describeIdempotencyStoreBound(context, options);
    describeIdempotencyStoreBytes(context, options);
    describeIdempotencyStoreRenew(context);
  });
}
