import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { Caller } from '../auth';
import { type Awaitable, CLOCK, type Clock, isPromiseLike } from '../common';
import { type ContainmentDecision, decide } from './containment-decision';
import type { ContainmentSnapshot } from './containment-snapshot';
import { ContainmentStore } from './containment.store';
import { CONTAINMENT_MODULE_OPTIONS, type ContainmentModuleOptions } from './containment.module-definition';

/**
 * Step 3 of the pipeline: reads the caller's containment snapshot once (the single
 * linearization point: a later change does not move a call already routed) and decides its
 * pool. Configured tenants start `not_contained`; anyone else, a store that fails and a
 * snapshot of another tenant route to the isolated pool.
 */
/** Configured tenants seeded at once at start-up. */
const SEEDS_IN_FLIGHT = 256;

@Injectable()
export class ContainmentRouter implements OnModuleInit {
  private readonly logger = new Logger('Bulkhead');
  /** Calls routed, by decision (decisions are shared objects): read when Prometheus scrapes. */
  private readonly routed = new Map<ContainmentDecision, number>();

  constructor(
    @Inject(ContainmentStore) private readonly store: ContainmentStore,
    @Inject(CONTAINMENT_MODULE_OPTIONS) private readonly options: ContainmentModuleOptions,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * Seeds every configured tenant; one the store cannot take now is seeded on its first call.
   * {@link SEEDS_IN_FLIGHT} at a time: on Redis they share the connection's pipeline instead of
   * waiting a round trip each (100,000 tenants took 10 s one by one).
   */
  async onModuleInit(): Promise<void> {
    const tenants = [...new Set(this.options.tenants ?? [])];
    for (let start = 0; start < tenants.length; start += SEEDS_IN_FLIGHT) {
      await Promise.all(tenants.slice(start, start + SEEDS_IN_FLIGHT).map((tenant) => this.seedOrLater(tenant)));
    }
  }

  private async seedOrLater(tenant: string): Promise<void> {
    try {
      await this.seed(tenant);
    } catch {
      // Seeded on the tenant's first call instead.
    }
  }

  /** The caller's decision; at once when the store answers at once (the memory store). */
  route(caller: Caller): Awaitable<ContainmentDecision> {
    if (!caller.known) return this.count(decide(caller.tenant, false, null));
    let read: Awaitable<ContainmentSnapshot | null>;
    try {
      read = this.store.read(caller.tenant);
    } catch (error) {
      return this.storeFailed(caller, error);
    }
    if (isPromiseLike(read)) {
      return Promise.resolve(read).then(
        (snapshot) => this.routeWith(caller, snapshot),
        (error: unknown) => this.storeFailed(caller, error),
      );
    }
    return this.routeWith(caller, read);
  }

  private routeWith(caller: Caller, snapshot: ContainmentSnapshot | null): Awaitable<ContainmentDecision> {
    if (snapshot) return this.count(decide(caller.tenant, true, snapshot));
    // A configured tenant without a snapshot (a wiped store): seeded now, then routed by it.
    return Promise.resolve()
      .then(() => this.seed(caller.tenant))
      .then(
        (seeded) => this.count(decide(caller.tenant, true, seeded)),
        (error: unknown) => this.storeFailed(caller, error),
      );
  }

  private storeFailed(caller: Caller, error: unknown): ContainmentDecision {
    this.logger.warn(`containment store failed; routing to the isolated pool (${(error as Error)?.name})`);
    return this.count(decide(caller.tenant, true, undefined));
  }

  /**
   * A configured tenant's first snapshot, `not_contained`, unless one exists (an operator's
   * write always wins). Known tenants only reach here: anything else fails closed.
   */
  private seed(tenant: string): Awaitable<ContainmentSnapshot> {
    const change = {
      state: 'not_contained' as const,
      posture: this.options.containment.defaultPosture,
      reason: 'configured tenant',
    };
    return this.store.seed(tenant, change, this.clock.wallNow());
  }

  /** How many calls each decision got so far. */
  counts(): ReadonlyMap<ContainmentDecision, number> {
    return this.routed;
  }

  /** The snapshot as the store has it (admin reads). */
  read(tenant: string): Awaitable<ContainmentSnapshot | null> {
    return this.store.read(tenant);
  }

  private count(decision: ContainmentDecision): ContainmentDecision {
    this.routed.set(decision, (this.routed.get(decision) ?? 0) + 1);
    return decision;
  }
}
