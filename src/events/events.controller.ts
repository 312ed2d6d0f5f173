import { Controller, Get, Query, Req, UseGuards } from '@nestjs/common';
import { ResilienceError } from '../common';
import { AdminGuard, requestViewer, WithoutTenant } from '../common/nest';
import { EventLedger, type LedgerEvent } from './event-ledger';

const DEFAULT_LIMIT = 100;

/** `limit` of either view: from 1 to the ledger's capacity, 100 when left out. */
function parseLimit(raw: string | undefined, capacity: number): number {
  if (raw === undefined) return DEFAULT_LIMIT;
  const limit = /^\d{1,7}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(limit >= 1 && limit <= capacity)) {
    throw new ResilienceError('invalid_request', `limit must be an integer from 1 to ${capacity}`);
  }
  return limit;
}

@Controller('v1/events')
export class EventsController {
  constructor(private readonly ledger: EventLedger) {}

  /**
   * The caller's newest events, newest last: its own tenant's, and the transitions of breakers
   * (and chaos on LLM targets) of what it may use. Never another tenant's name.
   */
  @Get()
  list(@Req() request: object, @Query('limit') limit?: string): { events: LedgerEvent[] } {
    return { events: this.ledger.recent(parseLimit(limit, this.ledger.capacity), requestViewer(request)) };
  }
}

/** For operators: every tenant's events and every transition, as the ledger holds them. */
@Controller('v1/admin/events')
@WithoutTenant()
@UseGuards(AdminGuard)
export class EventsAdminController {
  constructor(private readonly ledger: EventLedger) {}

  @Get()
  list(@Query('limit') limit?: string): { events: LedgerEvent[] } {
    return { events: this.ledger.recent(parseLimit(limit, this.ledger.capacity)) };
  }
}
