import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { EventLedger } from '../events';
import { BreakerRegistry } from './breaker-registry.service';

/**
 * Puts every breaker transition in the event ledger: `toolId` is the breaker's name (a tool's
 * breaker is named after it), `status` is `breaker_open`, `breaker_half_open` or
 * `breaker_closed`; no call, lane or tenant.
 */
@Injectable()
export class BreakerTransitionsRecorder implements OnModuleInit, OnModuleDestroy {
  private dispose: (() => void) | undefined;

  constructor(
    private readonly breakers: BreakerRegistry,
    private readonly ledger: EventLedger,
  ) {}

  onModuleInit(): void {
    this.dispose = this.breakers.onTransition((breaker, to) =>
      this.ledger.record('', breaker.name, '', '', `breaker_${to}`),
    );
  }

  onModuleDestroy(): void {
    this.dispose?.();
  }
}
