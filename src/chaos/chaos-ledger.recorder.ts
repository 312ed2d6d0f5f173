import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { CallOutcomes, EventLedger } from '../events';
import { ChaosRegistry } from './chaos-registry.service';

/**
 * Puts what chaos injected in the event ledger. A tool call's own line says it, in `chaos`
 * (the kinds injected into its attempts, in order). An LLM target's provider does not know
 * which call its attempt serves, so each injection there is a line of its own: `toolId` the
 * target (`llm.<route>/<provider>/<model>`), the route's lane, `status` `chaos_<kind>`, and no
 * call or tenant, like a breaker's transition, and seen by those who may use the route.
 */
@Injectable()
export class ChaosLedgerRecorder implements OnModuleInit, OnModuleDestroy {
  private dispose: (() => void) | undefined;

  constructor(
    private readonly chaos: ChaosRegistry,
    private readonly outcomes: CallOutcomes,
    private readonly ledger: EventLedger,
  ) {}

  onModuleInit(): void {
    if (!this.chaos.enabled) return;
    this.dispose = this.chaos.onInjected((injection) => {
      if (injection.callId !== undefined) this.outcomes.markChaos(injection.callId, injection.kind);
      else {
        const { target, lane, kind, audience } = injection;
        this.ledger.record('', target, lane, '', `chaos_${kind}`, undefined, audience);
      }
    });
  }

  onModuleDestroy(): void {
    this.dispose?.();
  }
}
