export * from './budget-gate.service';
export * from './budget-period';
export * from './budget.module';
export * from './budget.store';
export * from './memory-budget.store';
export * from './money';
export * from './redis-budget.store';
export * from './budget.module-definition';
