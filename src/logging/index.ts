export * from './call-log';
export * from './call-log.subscriber';
export * from './log-format';
export * from './log-levels';
export * from './logging.module';
export * from './pino-logger.service';
export * from './service-logger';
