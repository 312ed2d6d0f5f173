import { Global, Module } from '@nestjs/common';
import { AdminGuard } from '../auth';
import { BudgetGate } from './budget-gate.service';
import { BudgetsAdminController } from './budgets-admin.controller';

/** USD budgets per tenant (step 5 and its settlement) and `GET /v1/admin/budgets/{tenant}`. */
@Global()
@Module({ controllers: [BudgetsAdminController], providers: [BudgetGate, AdminGuard], exports: [BudgetGate] })
export class BudgetModule {}
