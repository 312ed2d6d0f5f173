import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit, Optional } from '@nestjs/common';
import { Counter } from 'prom-client';
import { UNEXPECTED_ERROR_WHERE, UnexpectedErrors } from '../lifecycle';
import { METRIC } from './metric-names';
import { MetricsRegistry } from './metrics-registry.provider';

/**
 * Errors nobody handled, by where they surfaced (`unhandled_rejection`, `uncaught_exception`).
 * Both series start at 0, so an alert on their increase fires on the first one. Counted only
 * where the process safety net listens (the service; an app that installs it).
 */
@Injectable()
export class UnexpectedErrorsCollector implements OnModuleInit, OnModuleDestroy {
  private dispose: (() => void) | undefined;

  constructor(
    @Optional() @Inject(UnexpectedErrors) private readonly errors: UnexpectedErrors | null,
    private readonly registry: MetricsRegistry,
  ) {}

  onModuleInit(): void {
    if (!this.errors) return;
    const counter = new Counter({
      name: METRIC.unexpectedErrors,
      help: 'Errors nobody handled (a bug), by where they surfaced: unhandled_rejection or uncaught_exception',
      labelNames: ['where'],
      registers: [this.registry],
    });
    for (const where of UNEXPECTED_ERROR_WHERE) counter.inc({ where }, 0);
    this.dispose = this.errors.onUnexpected((where) => counter.inc({ where }));
  }

  onModuleDestroy(): void {
    this.dispose?.();
  }
}
