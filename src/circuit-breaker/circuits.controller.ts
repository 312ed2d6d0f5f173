import { Controller, Get, HttpCode, Param, Post, Req, UseGuards } from '@nestjs/common';
import { AdminGuard } from '../auth';
import { NAME_PATTERN, ResilienceError } from '../common';
import { requestViewer, WithoutTenant } from '../common/nest';
import type { Breaker, CircuitSnapshot } from './breaker';
import { BreakerRegistry } from './breaker-registry.service';

@Controller('v1/circuits')
export class CircuitsController {
  constructor(private readonly breakers: BreakerRegistry) {}

  /** The breakers of what the caller may use, each saying only whether it refuses this caller alone. */
  @Get()
  list(@Req() request: object): { circuits: Record<string, CircuitSnapshot> } {
    return { circuits: this.breakers.snapshotFor(requestViewer(request)) };
  }
}

/**
 * For operators: every breaker with every tenant it refuses on its own; hold a circuit open (a
 * dependency under maintenance) or close it again.
 */
@Controller('v1/admin/circuits')
@WithoutTenant()
@UseGuards(AdminGuard)
export class CircuitsAdminController {
  constructor(private readonly breakers: BreakerRegistry) {}

  @Get()
  list(): { circuits: Record<string, CircuitSnapshot> } {
    return { circuits: this.breakers.snapshot() };
  }

  @Post(':name/open')
  @HttpCode(200)
  open(@Param('name') name: string): { circuit: string } & CircuitSnapshot {
    const breaker = this.find(name);
    breaker.forceOpen();
    return { circuit: breaker.name, ...breaker.snapshot() };
  }

  @Post(':name/close')
  @HttpCode(200)
  close(@Param('name') name: string): { circuit: string } & CircuitSnapshot {
    const breaker = this.find(name);
    breaker.close();
    return { circuit: breaker.name, ...breaker.snapshot() };
  }

  private find(name: string): Breaker {
    const breaker = this.breakers.get(name);
    // Echo the name only when it could be one: it is caller input.
    if (!breaker)
      throw new ResilienceError('not_found', `unknown circuit${NAME_PATTERN.test(name) ? ` '${name}'` : ''}`);
    return breaker;
  }
}
