export * from './admit-call';
export * from './attempt-deadline';
