export * from './event-stream';
export * from './count-tokens';
