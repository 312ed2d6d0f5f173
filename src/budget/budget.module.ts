import { Module } from '@nestjs/common';
import { AdminGuard } from '../auth';
import { CommonModule } from '../common/nest';
import { BudgetGate } from './budget-gate.service';
import { BudgetConfigurableModule } from './budget.module-definition';
import { BudgetsAdminController } from './budgets-admin.controller';

/**
 * USD budgets per tenant (step 5 and its settlement) and `GET /v1/admin/budgets/{tenant}`;
 * the BudgetStore comes from StoreModule.
 */
@Module({ imports: [CommonModule], providers: [BudgetGate, AdminGuard], exports: [BudgetGate] })
export class BudgetModule extends BudgetConfigurableModule {
  static readonly routes = [BudgetsAdminController];
}
