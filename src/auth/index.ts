export * from './admin.guard';
