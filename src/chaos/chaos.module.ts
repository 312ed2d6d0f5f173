import { Module } from '@nestjs/common';
import { CommonModule } from '../common/nest';
import { EventsModule } from '../events';
import { ChaosLedgerRecorder } from './chaos-ledger.recorder';
import { ChaosConfigurableModule } from './chaos.module-definition';
import { ChaosRegistry } from './chaos-registry.service';

/**
 * Failure rehearsal: faults and latency injected into the attempts of the tools and LLM targets
 * that have chaos settings, while `enabled`. The attempt runner and the LLM routes find its
 * registry when it is present (BulkheadModule brings it); without it, nothing is injected.
 */
@Module({
  imports: [CommonModule, EventsModule],
  providers: [ChaosRegistry, ChaosLedgerRecorder],
  exports: [ChaosRegistry],
})
export class ChaosModule extends ChaosConfigurableModule {}
