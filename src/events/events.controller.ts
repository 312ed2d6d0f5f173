import { Controller, Get, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ANONYMOUS_TENANT, ResilienceError } from '../common';
import { existingCallState } from '../common/nest';
import { EventLedger, type LedgerEvent } from './event-ledger';

const DEFAULT_LIMIT = 100;

@Controller('v1/events')
export class EventsController {
  constructor(private readonly ledger: EventLedger) {}

  /**
   * The caller's newest events, newest last (its own tenant's, and breaker transitions);
   * `limit` from 1 to the ledger's capacity.
   */
  @Get()
  list(@Req() request: FastifyRequest, @Query('limit') limit?: string): { events: LedgerEvent[] } {
    const tenant = existingCallState(request)?.tenant ?? ANONYMOUS_TENANT;
    return { events: this.ledger.recent(this.parseLimit(limit), tenant) };
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
