import { Module } from '@nestjs/common';
import { AdminGuard } from '../auth';
import { CommonModule } from '../common/nest';
import { sharedStoreProvider } from '../store';
import { BudgetGate } from './budget-gate.service';
import { BudgetStore } from './budget.store';
import { BUDGET_MODULE_OPTIONS, BudgetConfigurableModule, type BudgetModuleOptions } from './budget.module-definition';
import { MemoryBudgetStore } from './memory-budget.store';
import { RedisBudgetStore } from './redis-budget.store';
import { BudgetsAdminController } from './budgets-admin.controller';

/**
 * USD budgets per tenant (step 5 and its settlement) and `GET /v1/admin/budgets/{tenant}`;
 * the BudgetStore is in Redis when StoreModule holds a connection, in memory otherwise.
 */
@Module({
  imports: [CommonModule],
  providers: [
    sharedStoreProvider<BudgetStore, BudgetModuleOptions>(BudgetStore, BUDGET_MODULE_OPTIONS, {
      own: (options) => options.customStore,
      memory: (_options, clock) => new MemoryBudgetStore(clock),
      redis: ({ connection, keys, time }) => new RedisBudgetStore(connection, keys, time),
    }),
    BudgetGate,
    AdminGuard,
  ],
  exports: [BudgetStore, BudgetGate],
})
export class BudgetModule extends BudgetConfigurableModule {
  static readonly routes = [BudgetsAdminController];
}
