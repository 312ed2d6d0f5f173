import { ConfigurableModuleBuilder } from '@nestjs/common';
import { DEFAULT_MODULE_EXTRAS, withExtras } from '../common/nest';
import type { BudgetOptions } from './budget.options';
import type { BudgetStore } from './budget.store';

export interface BudgetModuleOptions {
  /** The `budgets` section of the config file: period, default and per-tenant caps in USD. */
  budgets: BudgetOptions;
  /** A BudgetStore of the app's own, in place of the memory or Redis one StoreModule's connection decides. */
  customStore?: BudgetStore;
}

export const { ConfigurableModuleClass: BudgetConfigurableModule, MODULE_OPTIONS_TOKEN: BUDGET_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<BudgetModuleOptions>()
    .setClassMethodName('forRoot')
    .setExtras(DEFAULT_MODULE_EXTRAS, withExtras)
    .build();
