import { Module } from '@nestjs/common';
import { CommonModule } from '../common/nest';
import { ToolAttemptWrappers } from '../dispatch';
import { EventsModule } from '../events';
import { LlmProviderWrappers } from '../llm';
import { ChaosLedgerRecorder } from './chaos-ledger.recorder';
import { ChaosConfigurableModule } from './chaos.module-definition';
import { ChaosRegistry } from './chaos-registry.service';

/**
 * Failure rehearsal: faults and latency injected into the attempts of the tools and LLM targets
 * that have chaos settings, while `enabled`. It wraps them from outside: the attempt runner and
 * the LLM routes find its registry as their ToolAttemptWrappers and LlmProviderWrappers when it
 * is present (BulkheadModule brings it); without it, nothing is injected.
 */
@Module({
  imports: [CommonModule, EventsModule],
  providers: [
    ChaosRegistry,
    ChaosLedgerRecorder,
    { provide: ToolAttemptWrappers, useExisting: ChaosRegistry },
    { provide: LlmProviderWrappers, useExisting: ChaosRegistry },
  ],
  exports: [ChaosRegistry, ToolAttemptWrappers, LlmProviderWrappers],
})
export class ChaosModule extends ChaosConfigurableModule {}
