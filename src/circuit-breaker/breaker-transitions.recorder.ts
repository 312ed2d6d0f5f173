import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { EventLedger } from '../events';
import { BreakerRegistry } from './breaker-registry.service';
import { logRecord } from '../common';

/**
 * Puts every breaker transition in the event ledger: `toolId` is the breaker's name (a tool's
 * breaker is named after it), `status` is `breaker_open`, `breaker_half_open` or
 * `breaker_closed`; no call, lane or tenant, and seen by those who may see the breaker. And in the log, one line each (`event: breaker`):
 * opening at `warn` (a dependency keeps failing), half-opening and closing at `log`; a tenant
 * the breaker starts refusing on its own at `warn` (`event: breaker_tenant`).
 */
@Injectable()
export class BreakerTransitionsRecorder implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Bulkhead');
  private disposers: Array<() => void> = [];

  constructor(
    private readonly breakers: BreakerRegistry,
    private readonly ledger: EventLedger,
  ) {}

  onModuleInit(): void {
    this.disposers = [
      this.breakers.onTransition((breaker, to) => {
        this.ledger.record(
          '',
          breaker.name,
          '',
          '',
          `breaker_${to}`,
          undefined,
          this.breakers.audienceOf(breaker.name),
        );
        const line = { msg: `breaker ${breaker.name} ${to}`, event: 'breaker', breaker: breaker.name, state: to };
        if (to === 'open') this.logger.warn(line);
        else this.logger.log(line);
      }),
      this.breakers.onTenantOpen((breaker, tenant) =>
        this.logger.warn(
          logRecord({
            msg: `breaker ${breaker.name} refuses tenant ${tenant} on its own`,
            event: 'breaker_tenant',
            breaker: breaker.name,
            tenant,
          }),
        ),
      ),
    ];
  }

  /** Not on module destroy: a breaker that moves during the drain is still recorded. */
  onApplicationShutdown(): void {
    for (const dispose of this.disposers) dispose();
    this.disposers = [];
  }
}
