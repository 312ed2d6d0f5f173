import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { type Audience, CLOCK, type Clock, eitherOf, EVERYONE, Listeners, type Viewer } from '../common';
import { Breaker, type CircuitSnapshot, type CircuitState, type ProbeOutcome } from './breaker';
import { type BreakerSettings, breakerSettings } from './breaker-settings';
import { CIRCUIT_BREAKER_MODULE_OPTIONS, type CircuitBreakerModuleOptions } from './circuit-breaker.module-definition';

export const DEFAULT_BREAKER_KEY = 'default';

export type BreakerTransitionListener = (breaker: Breaker, to: CircuitState, from: CircuitState) => void;

/**
 * Every breaker of the service, by name: one per tool (named after it), one per name in the
 * config's `breakers`, one per name on a `@CircuitBreaker` route. All exist once the app has
 * started, so metrics and `GET /v1/circuits` know every name up front.
 */
@Injectable()
export class BreakerRegistry implements OnApplicationShutdown {
  private readonly breakers = new Map<string, Breaker>();
  /** Who may see each breaker: whoever may use what registered it; unset until something does. */
  private readonly audiences = new Map<string, Audience>();
  private readonly defaults: Partial<BreakerSettings> | undefined;
  private readonly transitions = new Listeners<Parameters<BreakerTransitionListener>>();
  private readonly tenantOpens = new Listeners<[breaker: Breaker, tenant: string]>();
  private readonly slowCalls = new Listeners<[breaker: Breaker]>();
  private readonly probes = new Listeners<[breaker: Breaker, outcome: ProbeOutcome]>();

  constructor(
    @Inject(CIRCUIT_BREAKER_MODULE_OPTIONS) options: CircuitBreakerModuleOptions,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    const breakers = options.breakers ?? {};
    this.defaults = breakers[DEFAULT_BREAKER_KEY];
    for (const [name, settings] of Object.entries(breakers)) {
      if (name !== DEFAULT_BREAKER_KEY) this.create(name, settings);
    }
  }

  /**
   * The breaker `name`, created at start-up with the default settings and `overrides`. A name
   * used again (two routes guarding one dependency) gets the same breaker. `audience` is who
   * may use what it guards, so who may see it ({@link snapshotFor}); a breaker registered
   * twice is seen by the audiences of both.
   */
  register(name: string, overrides?: Partial<BreakerSettings>, audience: Audience = EVERYONE): Breaker {
    if (name === DEFAULT_BREAKER_KEY) throw new Error(`'${DEFAULT_BREAKER_KEY}' is not a breaker name`);
    const earlier = this.audiences.get(name);
    this.audiences.set(name, earlier ? eitherOf(earlier, audience) : audience);
    const existing = this.breakers.get(name);
    if (existing) {
      if (overrides) throw new Error(`breaker '${name}' is configured twice`);
      return existing;
    }
    return this.create(name, overrides);
  }

  get(name: string): Breaker | undefined {
    return this.breakers.get(name);
  }

  all(): IterableIterator<Breaker> {
    return this.breakers.values();
  }

  /** Every breaker, with every tenant it refuses on its own: the operators' view. */
  snapshot(): Record<string, CircuitSnapshot> {
    const snapshot: Record<string, CircuitSnapshot> = {};
    for (const [name, breaker] of this.breakers) snapshot[name] = breaker.snapshot();
    return snapshot;
  }

  /**
   * A tenant's view: the breakers of what it may use, each saying only whether it refuses this
   * tenant on its own. No other tenant's name, and no breaker of a route kept for others.
   */
  snapshotFor(viewer: Viewer): Record<string, CircuitSnapshot> {
    const snapshot: Record<string, CircuitSnapshot> = {};
    for (const [name, breaker] of this.breakers) {
      if (this.audienceOf(name)(viewer)) snapshot[name] = breaker.snapshot(viewer.tenant);
    }
    return snapshot;
  }

  /**
   * Who may see the breaker `name` and its transitions. A breaker nothing registered (a name of
   * the config's `breakers` no route uses) guards nothing that is kept from anyone.
   */
  audienceOf(name: string): Audience {
    return this.audiences.get(name) ?? EVERYONE;
  }

  /** Calls `listener` on every breaker's changes of state; returns a function that removes it. */
  onTransition(listener: BreakerTransitionListener): () => void {
    return this.transitions.add(listener);
  }

  /** Calls `listener` whenever a breaker starts refusing one tenant on its own ({@link Breaker.refusal}). */
  onTenantOpen(listener: (breaker: Breaker, tenant: string) => void): () => void {
    return this.tenantOpens.add(listener);
  }

  /** Calls `listener` on each slow attempt of any breaker (`slowCallDurationMs`). */
  onSlowCall(listener: (breaker: Breaker) => void): () => void {
    return this.slowCalls.add(listener);
  }

  /** Calls `listener` with how each attempt ending while a breaker is half open came out ({@link Breaker.onProbe}). */
  onProbe(listener: (breaker: Breaker, outcome: ProbeOutcome) => void): () => void {
    return this.probes.add(listener);
  }

  onApplicationShutdown(): void {
    for (const breaker of this.breakers.values()) breaker.shutdown();
  }

  private create(name: string, overrides: Partial<BreakerSettings> | undefined): Breaker {
    const breaker = new Breaker(name, breakerSettings(this.defaults, overrides), this.clock);
    breaker.onStateChange((to, from) => this.transitions.emit(breaker, to, from));
    breaker.onTenantOpen((tenant) => this.tenantOpens.emit(breaker, tenant));
    breaker.onSlowCall(() => this.slowCalls.emit(breaker));
    breaker.onProbe((outcome) => this.probes.emit(breaker, outcome));
    this.breakers.set(name, breaker);
    return breaker;
  }
}
