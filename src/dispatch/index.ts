export * from './attempt-runner';
export * from './call-executor';
export * from './call-pipeline.service';
export * from './dispatch.module';
export * from './dispatch.module-definition';
export * from '../idempotency';
export * from '../retry/retry-budget';
export * from '../retry/retry-policy';
export * from './tool';
export * from './tool-registry.service';
export * from './tool.decorator';
export {
  durationHeaderSchema,
  idempotencyKeySchema,
  invokeBodySchema,
  parseIdempotencyKey,
  toolArgumentsSchema,
} from './invoke-request';
export { batchCallSchema, batchRequestDocumentSchema, MAX_BATCH_CALLS } from './batch/batch-request';
