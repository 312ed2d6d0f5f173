export * from './event-stream';
