import { MemoryBudgetStore } from '../../budget';
import { MemoryRateLimitStore } from '../../rate-limit';
import { describeCallAdmission } from './call-admission.contract';

describeCallAdmission('memory stores (one step after the other)', (clock) => ({
  rates: new MemoryRateLimitStore(clock),
  budgets: new MemoryBudgetStore(clock),
  joint: null,
}));
