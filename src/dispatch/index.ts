export * from './call-pipeline.service';
export * from './dispatch.module';
export * from './dispatch.module-definition';
export * from './outbound-http';
export * from './tool';
export * from './tool-registry.service';
export * from './tool.decorator';
