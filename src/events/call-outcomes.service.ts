import { Injectable } from '@nestjs/common';
import { EventLedger } from './event-ledger';

/** How one call through a lane ended: a tool call or a `@Bulkhead` route. */
export interface CallOutcome {
  callId: string;
  /** The tool, or `Controller.method` for a company route. */
  toolId: string;
  lane: string;
  tenant: string;
  /** See `callStatus`: `ok`, an error kind, `cancelled`, `finished_after_caller_cancel`. */
  status: string;
  durationMs: number;
  attempts: number;
}

/**
 * Where every finished call is reported once: it goes into the event ledger, and to
 * listeners such as the metrics collector (so the call path never imports prom-client).
 */
@Injectable()
export class CallOutcomes {
  private listeners: Array<(outcome: CallOutcome) => void> = [];

  constructor(private readonly ledger: EventLedger) {}

  record(outcome: CallOutcome): void {
    this.ledger.record(outcome.callId, outcome.toolId, outcome.lane, outcome.tenant, outcome.status);
    for (const listener of this.listeners) listener(outcome);
  }

  onOutcome(listener: (outcome: CallOutcome) => void): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((item) => item !== listener);
    };
  }
}
