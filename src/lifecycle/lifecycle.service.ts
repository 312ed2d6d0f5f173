import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { closeConnectionsWhileDraining, closeConnectionsWhileDrainingOnServer } from './connection-close.hook';
import { LaneRegistry } from '../bulkhead';
import { CLOCK, type Clock, logRecord, ResilienceError } from '../common';
import { LIFECYCLE_MODULE_OPTIONS, type LifecycleModuleOptions } from './lifecycle.module-definition';

/** How long accepted calls may finish after shutdown starts, when the options do not say. */
export const DEFAULT_DRAIN_MS = 10_000;

/** The answer of calls still unfinished when the drain time is over. */
export const SHUTDOWN_STOPPED = new ResilienceError('stopped', 'the service shut down before the call finished');

/**
 * The shutdown sequence of docs/design.md ("Shutdown"): stop admission, flip readiness, let running and
 * waiting calls finish within `server.shutdownDrainMs`, then stop what is left as `stopped`.
 * Nest runs it before it closes the HTTP server, on `app.close()` or a shutdown signal.
 */
@Injectable()
export class Lifecycle implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger('Bulkhead');
  private drainingFlag = false;
  private drained: Promise<void> | undefined;
  /** Express: tells the responses under way to close their connection (Fastify's hook asks `draining` itself). */
  private closeAnswering: (() => void) | undefined;

  constructor(
    private readonly lanes: LaneRegistry,
    private readonly adapterHost: HttpAdapterHost,
    @Inject(LIFECYCLE_MODULE_OPTIONS) private readonly options: LifecycleModuleOptions,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** True from the moment shutdown starts: readiness answers 503, responses close their connection. */
  get draining(): boolean {
    return this.drainingFlag;
  }

  /** Keep-alive clients are told to leave while draining, in whatever app this module is in. */
  onModuleInit(): void {
    const adapter = this.adapterHost.httpAdapter;
    if (adapter?.getType() === 'fastify') {
      closeConnectionsWhileDraining(adapter.getInstance<FastifyInstance>(), this);
    } else if (adapter?.getType() === 'express') {
      this.closeAnswering = closeConnectionsWhileDrainingOnServer(adapter.getHttpServer() as Server, this);
    }
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.drain();
  }

  /** Starts the drain (once) and resolves when it is over. */
  drain(): Promise<void> {
    this.drained ??= this.runDrain();
    return this.drained;
  }

  private async runDrain(): Promise<void> {
    this.drainingFlag = true;
    this.closeAnswering?.();
    this.lanes.close();
    // Keep-alive sockets with no request in flight would otherwise carry the next request
    // into a closing server (docs/pitfalls.md #6).
    (this.adapterHost.httpAdapter?.getHttpServer() as Server | undefined)?.closeIdleConnections?.();
    const drainMs = this.options.shutdownDrainMs ?? DEFAULT_DRAIN_MS;
    this.logger.log(
      logRecord({
        msg: `shutting down: admission stopped, draining for up to ${drainMs} ms`,
        event: 'shutdown',
        drainMs,
      }),
    );
    let timer: unknown;
    const deadline = new Promise<false>((resolve) => {
      timer = this.clock.setTimer(() => resolve(false), drainMs);
    });
    const finished = await Promise.race([this.lanes.whenIdle().then(() => true as const), deadline]);
    this.clock.clearTimer(timer);
    if (finished) {
      this.logger.log(logRecord({ msg: 'drained: every accepted call finished', event: 'shutdown' }));
      return;
    }
    const left = Object.values(this.lanes.snapshot()).reduce((sum, lane) => sum + lane.active + lane.waiting, 0);
    this.logger.warn(
      logRecord({
        msg: `drain time over: stopping ${left} unfinished calls`,
        event: 'shutdown',
        unfinished: left,
      }),
    );
    this.lanes.stopNow(SHUTDOWN_STOPPED);
  }
}
