import { Controller, Get, Param, UseGuards } from '@nestjs/common';
import { AdminGuard } from '../auth';
import { NAME_PATTERN, ResilienceError } from '../common';
import { WithoutTenant } from '../common/nest';
import { BudgetGate, type BudgetView } from './budget-gate.service';

/** For operators: a tenant's budget in the current period (admin token). */
@Controller('v1/admin/budgets')
@WithoutTenant()
@UseGuards(AdminGuard)
export class BudgetsAdminController {
  constructor(private readonly budget: BudgetGate) {}

  @Get(':tenant')
  read(@Param('tenant') tenant: string): Promise<BudgetView> {
    if (!NAME_PATTERN.test(tenant)) throw new ResilienceError('invalid_request', 'not a tenant name');
    return this.budget.view(tenant);
  }
}
