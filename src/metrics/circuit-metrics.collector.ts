import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit, Optional } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { BreakerRegistry, type CircuitState, type ProbeOutcome } from '../circuit-breaker';
import { METRIC } from './metric-names';
import { MetricsRegistry } from './metrics-registry.provider';

const STATE_VALUE: Record<CircuitState, number> = { closed: 0, half_open: 1, open: 2 };
const STATES = Object.keys(STATE_VALUE) as CircuitState[];
const PROBE_OUTCOMES: readonly ProbeOutcome[] = ['succeeded', 'failed', 'slow', 'stopped'];

/**
 * Breaker state (read when Prometheus scrapes) and transitions, by breaker name; the tenants
 * each refuses on its own; its slow calls (only a breaker with `slowCallDurationMs` counts any)
 * and the outcomes of its half-open attempts. Every series starts at zero. Tenants are not a
 * label: one breaker may blame many of them, and `GET /v1/circuits` names them.
 */
@Injectable()
export class CircuitMetricsCollector implements OnModuleInit, OnModuleDestroy {
  private dispose: (() => void) | undefined;

  constructor(
    @Optional() @Inject(BreakerRegistry) private readonly breakers: BreakerRegistry | null,
    private readonly registry: MetricsRegistry,
  ) {}

  onModuleInit(): void {
    const breakers = this.breakers;
    if (!breakers) return;
    new Gauge({
      name: METRIC.circuitState,
      help: 'Circuit state: 0 closed, 1 half open, 2 open',
      labelNames: ['breaker'],
      registers: [this.registry],
      collect() {
        for (const breaker of breakers.all()) this.set({ breaker: breaker.name }, STATE_VALUE[breaker.state]);
      },
    });
    const transitions = new Counter({
      name: METRIC.circuitTransitions,
      help: 'Circuit state changes, by breaker and the state entered',
      labelNames: ['breaker', 'to'],
      registers: [this.registry],
      collect() {
        // Every series from zero, so rate() and alerts work before the first transition.
        for (const breaker of breakers.all()) for (const to of STATES) this.inc({ breaker: breaker.name, to }, 0);
      },
    });
    new Gauge({
      name: METRIC.circuitTenantsOpen,
      help: 'Tenants a breaker refuses on their own (their calls failed while others succeeded), by breaker',
      labelNames: ['breaker'],
      registers: [this.registry],
      collect() {
        for (const breaker of breakers.all()) this.set({ breaker: breaker.name }, breaker.tenantsOpen);
      },
    });
    const tenantOpens = new Counter({
      name: METRIC.circuitTenantOpens,
      help: 'Times a breaker started refusing one tenant on its own instead of opening for all, by breaker',
      labelNames: ['breaker'],
      registers: [this.registry],
      collect() {
        for (const breaker of breakers.all()) this.inc({ breaker: breaker.name }, 0);
      },
    });
    const slowCalls = new Counter({
      name: METRIC.circuitSlowCalls,
      help: "Attempts slower than their breaker's slowCallDurationMs, whatever their outcome, by breaker",
      labelNames: ['breaker'],
      registers: [this.registry],
      collect() {
        for (const breaker of breakers.all()) this.inc({ breaker: breaker.name }, 0);
      },
    });
    const probes = new Counter({
      name: METRIC.circuitProbes,
      help: 'Attempts that ended while their breaker was half open, by breaker and outcome (succeeded, failed, slow, stopped)',
      labelNames: ['breaker', 'outcome'],
      registers: [this.registry],
      collect() {
        for (const breaker of breakers.all()) {
          for (const outcome of PROBE_OUTCOMES) this.inc({ breaker: breaker.name, outcome }, 0);
        }
      },
    });
    const disposers = [
      this.breakers.onTransition((breaker, to) => transitions.inc({ breaker: breaker.name, to })),
      this.breakers.onTenantOpen((breaker) => tenantOpens.inc({ breaker: breaker.name })),
      this.breakers.onSlowCall((breaker) => slowCalls.inc({ breaker: breaker.name })),
      this.breakers.onProbe((breaker, outcome) => probes.inc({ breaker: breaker.name, outcome })),
    ];
    this.dispose = () => disposers.forEach((dispose) => dispose());
  }

  onModuleDestroy(): void {
    this.dispose?.();
  }
}
