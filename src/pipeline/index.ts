export * from './admit-call';
