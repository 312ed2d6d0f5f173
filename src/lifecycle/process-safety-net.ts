import type { INestApplicationContext } from '@nestjs/common';
import { CLOCK, type Clock } from '../common';
import { LIFECYCLE_MODULE_OPTIONS, type LifecycleModuleOptions } from './lifecycle.module-definition';
import { DEFAULT_DRAIN_MS } from './lifecycle.service';
import { ProcessShutdown } from './process-shutdown';
import { UnexpectedErrors } from './unexpected-errors';

/** What the process does after an unhandled rejection is logged and counted. */
export type UnhandledRejectionPolicy = NonNullable<LifecycleModuleOptions['onUnhandledRejection']>;

export interface ProcessSafetyNetOptions {
  /**
   * `serve` keeps serving; `drain` drains and exits 1, as an uncaught exception does.
   * @default the LifecycleModule's `onUnhandledRejection` (`server.onUnhandledRejection`), else 'serve'
   */
  onUnhandledRejection?: UnhandledRejectionPolicy;
  /** The shutdown a drain runs; the service passes the one its signals share. @default one on `app` */
  shutdown?: ProcessShutdown;
  /** Where the events come from. @default process */
  process?: Pick<NodeJS.Process, 'on' | 'off'>;
}

/**
 * The last line of defence (docs/design.md, "What nobody foresaw: the process policy"): an
 * unhandled rejection or uncaught exception is logged without its payload and counted in
 * `bulkhead_unexpected_errors_total{where}`. Then an unhandled rejection keeps the process
 * serving (unless the policy says `drain`), and an uncaught exception drains it and exits 1.
 * The service installs it at start; an app that imports the modules keeps its own process
 * policy, and calls this only to adopt Bulkhead's. Needs the LifecycleModule (BulkheadModule
 * imports it). Returns the function that removes the handlers.
 */
export function installProcessSafetyNet(
  app: INestApplicationContext,
  options: ProcessSafetyNetOptions = {},
): () => void {
  const errors = app.get(UnexpectedErrors, { strict: false });
  const lifecycle = app.get<LifecycleModuleOptions>(LIFECYCLE_MODULE_OPTIONS, { strict: false });
  const target = options.process ?? process;
  const drainOnRejection = (options.onUnhandledRejection ?? lifecycle.onUnhandledRejection) === 'drain';
  let shutdown = options.shutdown;
  const drain = (unexpected: 'unhandled_rejection' | 'uncaught_exception') => {
    shutdown ??= new ProcessShutdown(app, {
      drainMs: lifecycle.shutdownDrainMs ?? DEFAULT_DRAIN_MS,
      clock: app.get<Clock>(CLOCK, { strict: false }),
    });
    shutdown.stop({ unexpected });
  };
  const onRejection = (reason: unknown) => {
    errors.report('unhandled_rejection', reason);
    if (drainOnRejection) drain('unhandled_rejection');
  };
  const onException = (error: unknown) => {
    errors.report('uncaught_exception', error);
    drain('uncaught_exception');
  };
  target.on('unhandledRejection', onRejection);
  target.on('uncaughtException', onException);
  return () => {
    target.off('unhandledRejection', onRejection);
    target.off('uncaughtException', onException);
  };
}
