import { Body, Controller, Get, Inject, Logger, Param, Put, UseGuards } from '@nestjs/common';
import { AdminGuard } from '../auth';
import { ANONYMOUS_TENANT, type Clock, CLOCK, logRecord, NAME_PATTERN, ResilienceError } from '../common';
import { WithoutTenant } from '../common/nest';
import { CONTAINMENT_MODULE_OPTIONS, type ContainmentModuleOptions } from './containment.module-definition';
import { EventLedger } from '../events';
import { containmentChangeSchema } from './containment-change.schema';
import type { ContainmentSnapshot } from './containment-snapshot';
import { ContainmentStore } from './containment.store';

const CHANGE_RULE =
  'the body must be { "state": "not_contained" | "active" | "released" | "indeterminate", ' +
  '"posture"?: "hard" | "degraded", "reason"?: a string of at most 500 characters }';

/** For operators: read and set a tenant's containment (admin token). */
@Controller('v1/admin/containment')
@WithoutTenant()
@UseGuards(AdminGuard)
export class ContainmentAdminController {
  private readonly logger = new Logger('Bulkhead');

  constructor(
    @Inject(ContainmentStore) private readonly store: ContainmentStore,
    @Inject(CONTAINMENT_MODULE_OPTIONS) private readonly options: ContainmentModuleOptions,
    private readonly ledger: EventLedger,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  @Get(':tenant')
  async read(@Param('tenant') tenant: string): Promise<ContainmentSnapshot> {
    const snapshot = await this.store.read(checkTenant(tenant));
    if (!snapshot) throw new ResilienceError('not_found', `no containment snapshot for tenant '${tenant}'`);
    return snapshot;
  }

  /** Sets the tenant's containment; calls routed from now on follow it, calls under way do not move. */
  @Put(':tenant')
  async write(@Param('tenant') tenant: string, @Body() body: unknown): Promise<ContainmentSnapshot> {
    checkTenant(tenant);
    const parsed = containmentChangeSchema.safeParse(body);
    if (!parsed.success) throw new ResilienceError('invalid_request', CHANGE_RULE);
    const { state, posture, reason } = parsed.data as {
      state: ContainmentSnapshot['state'];
      posture?: ContainmentSnapshot['posture'];
      reason?: string;
    };
    const snapshot = await this.store.write(
      tenant,
      { state, posture: posture ?? this.options.containment.defaultPosture, reason: reason ?? '' },
      this.clock.wallNow(),
    );
    // Who changed it is an admin; the ledger and the log never hold the token or the reason.
    this.ledger.record('', 'admin', '', tenant, `containment_${state}`);
    this.logger.log(
      logRecord({
        msg: `containment of tenant ${tenant}: ${snapshot.state} (${snapshot.posture})`,
        event: 'containment',
        tenant,
        state: snapshot.state,
        posture: snapshot.posture,
        version: snapshot.version,
      }),
    );
    return snapshot;
  }
}

function checkTenant(tenant: string): string {
  if (!NAME_PATTERN.test(tenant)) throw new ResilienceError('invalid_request', 'not a tenant name');
  if (tenant === ANONYMOUS_TENANT) {
    throw new ResilienceError('invalid_request', `'${ANONYMOUS_TENANT}' is always routed to the isolated pool`);
  }
  return tenant;
}
