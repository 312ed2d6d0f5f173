import { Controller, Get, Query } from '@nestjs/common';
import { ResilienceError } from '../common';
import { EventLedger, type LedgerEvent } from './event-ledger';

const DEFAULT_LIMIT = 100;

@Controller('v1/events')
export class EventsController {
  constructor(private readonly ledger: EventLedger) {}

  /** The newest events, newest last; `limit` from 1 to the ledger's capacity. */
  @Get()
  list(@Query('limit') limit?: string): { events: LedgerEvent[] } {
    return { events: this.ledger.recent(this.parseLimit(limit)) };
  }

  private parseLimit(raw: string | undefined): number {
    if (raw === undefined) return DEFAULT_LIMIT;
    const limit = /^\d{1,7}$/.test(raw) ? Number(raw) : Number.NaN;
    if (!(limit >= 1 && limit <= this.ledger.capacity)) {
      throw new ResilienceError('invalid_request', `limit must be an integer from 1 to ${this.ledger.capacity}`);
    }
    return limit;
  }
}
