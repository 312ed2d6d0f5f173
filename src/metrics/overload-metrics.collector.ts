import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit, Optional } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { PRIORITY_CLASSES } from '../bulkhead';
import { OverloadGuard } from '../overload';
import { METRIC } from './metric-names';
import { MetricsRegistry } from './metrics-registry.provider';

/**
 * The process overload guard: whether it sheds (read when Prometheus scrapes), how hard, what it
 * read of the loop and the heap, and the calls it refused by class (a bounded label: three
 * classes, each from zero). Nothing while the guard is off.
 */
@Injectable()
export class OverloadMetricsCollector implements OnModuleInit, OnModuleDestroy {
  private dispose: (() => void) | undefined;

  constructor(
    @Optional() @Inject(OverloadGuard) private readonly guard: OverloadGuard | null,
    private readonly registry: MetricsRegistry,
  ) {}

  onModuleInit(): void {
    const guard = this.guard;
    if (!guard) return;
    const registers = [this.registry];
    new Gauge({
      name: METRIC.overloadState,
      help: 'Whether the overload guard sheds new calls: 1 overloaded, 0 not',
      registers,
      collect() {
        this.set(guard.snapshot().overloaded ? 1 : 0);
      },
    });
    new Gauge({
      name: METRIC.overloadLevel,
      help: 'How hard the overload guard sheds, 0-1: sheddable calls all refused from 0.5, standard ones from 1',
      registers,
      collect() {
        this.set(guard.snapshot().level);
      },
    });
    new Gauge({
      name: METRIC.overloadEventLoopDelay,
      help: "The event loop's delay (p99 of the guard's last sample window), in seconds",
      registers,
      collect() {
        this.set(guard.snapshot().reading.eventLoopDelayMs / 1000);
      },
    });
    new Gauge({
      name: METRIC.overloadHeapUsedRatio,
      help: "The heap in use over its limit at the guard's last sample, 0-1",
      registers,
      collect() {
        this.set(guard.snapshot().reading.heapUsedRatio);
      },
    });
    const refusals = new Counter({
      name: METRIC.overloadRefusals,
      help: 'New calls the overload guard refused (503 overloaded), by priority class',
      labelNames: ['class'],
      registers,
    });
    for (const priority of PRIORITY_CLASSES) refusals.inc({ class: priority }, 0);
    this.dispose = guard.onRefuse((priority) => refusals.inc({ class: priority }));
  }

  onModuleDestroy(): void {
    this.dispose?.();
  }
}
