export * from './call-outcomes.service';
export * from './call-status';
export * from './event-ledger';
export * from './events.module';
