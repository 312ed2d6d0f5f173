import { EventEmitter } from 'node:events';
import { type INestApplicationContext, Logger } from '@nestjs/common';
import { CLOCK } from '../common';
import { FakeClock, settle } from '../common/fake-clock';
import { deferred } from '../../test/support/deferred';
import { LIFECYCLE_MODULE_OPTIONS, type LifecycleModuleOptions } from './lifecycle.module-definition';
import { EXIT_GRACE_MS, ProcessShutdown } from './process-shutdown';
import { installProcessSafetyNet } from './process-safety-net';
import { UnexpectedErrors } from './unexpected-errors';

const DRAIN_MS = 1_000;

/**
 * The app as the safety net sees it: the providers it reads, and a close that the test ends by
 * hand (the drain itself is src/lifecycle/lifecycle.service.ts's, tested on its own).
 */
function fixture(options: LifecycleModuleOptions = {}) {
  const clock = new FakeClock();
  const errors = new UnexpectedErrors();
  const closed = deferred<void>();
  let closes = 0;
  const providers = new Map<unknown, unknown>([
    [UnexpectedErrors, errors],
    [LIFECYCLE_MODULE_OPTIONS, { shutdownDrainMs: DRAIN_MS, ...options }],
    [CLOCK, clock],
  ]);
  const app = {
    get: (token: unknown) => providers.get(token),
    close: () => {
      closes++;
      return closed.promise;
    },
  } as unknown as INestApplicationContext;
  const exits: number[] = [];
  const shutdown = new ProcessShutdown(app, { drainMs: DRAIN_MS, clock, exit: (code) => exits.push(code) });
  const target = new EventEmitter();
  const where: string[] = [];
  errors.onUnexpected((at) => where.push(at));
  return { app, clock, errors, closed, closes: () => closes, exits, shutdown, target, where };
}

// The lines themselves: test/lifecycle/unexpected-errors.e2e-spec.ts reads them from the real process.
beforeAll(() => Logger.overrideLogger(false));
afterAll(() => Logger.overrideLogger(['error', 'warn', 'log']));

describe('installProcessSafetyNet', () => {
  it('counts an unhandled rejection and keeps serving by default', async () => {
    const { app, target, where, closes, exits, shutdown } = fixture();
    installProcessSafetyNet(app, { process: target as unknown as NodeJS.Process, shutdown });
    target.emit('unhandledRejection', new TypeError('x'), Promise.resolve());
    target.emit('unhandledRejection', 'not an error', Promise.resolve());
    await settle();
    expect(where).toEqual(['unhandled_rejection', 'unhandled_rejection']);
    expect(closes()).toBe(0);
    expect(exits).toEqual([]);
    expect(shutdown.stopping).toBe(false);
  });

  it('drains on an unhandled rejection when the lifecycle options say drain, and exits 1 once closed', async () => {
    const { app, target, closed, closes, exits, shutdown } = fixture({ onUnhandledRejection: 'drain' });
    installProcessSafetyNet(app, { process: target as unknown as NodeJS.Process, shutdown });
    target.emit('unhandledRejection', new Error('x'), Promise.resolve());
    target.emit('unhandledRejection', new Error('y'), Promise.resolve());
    expect(closes()).toBe(1);
    closed.resolve();
    await settle();
    expect(exits).toEqual([1]);
  });

  it('lets an option override the lifecycle options', () => {
    const { app, target, closes, shutdown } = fixture({ onUnhandledRejection: 'drain' });
    installProcessSafetyNet(app, {
      process: target as unknown as NodeJS.Process,
      shutdown,
      onUnhandledRejection: 'serve',
    });
    target.emit('unhandledRejection', new Error('x'), Promise.resolve());
    expect(closes()).toBe(0);
  });

  it('drains once on uncaught exceptions and exits 1, even when the close succeeds', async () => {
    const { app, target, closed, closes, exits, where, shutdown } = fixture();
    installProcessSafetyNet(app, { process: target as unknown as NodeJS.Process, shutdown });
    target.emit('uncaughtException', new Error('x'), 'uncaughtException');
    target.emit('uncaughtException', new Error('y'), 'uncaughtException');
    shutdown.stop({ signal: 'SIGTERM' });
    expect(where).toEqual(['uncaught_exception', 'uncaught_exception']);
    expect(closes()).toBe(1);
    closed.resolve();
    await settle();
    expect(exits).toEqual([1]);
  });

  it('leaves anyway when the close never ends: exit 1 past the drain time and its grace', () => {
    const { app, target, clock, exits, shutdown } = fixture();
    installProcessSafetyNet(app, { process: target as unknown as NodeJS.Process, shutdown });
    target.emit('uncaughtException', new Error('x'), 'uncaughtException');
    clock.advance(DRAIN_MS + EXIT_GRACE_MS - 1);
    expect(exits).toEqual([]);
    clock.advance(1);
    expect(exits).toEqual([1]);
  });

  it('removes its handlers when disposed', () => {
    const { app, target, shutdown } = fixture();
    const dispose = installProcessSafetyNet(app, { process: target as unknown as NodeJS.Process, shutdown });
    expect(target.listenerCount('unhandledRejection')).toBe(1);
    expect(target.listenerCount('uncaughtException')).toBe(1);
    dispose();
    expect(target.listenerCount('unhandledRejection')).toBe(0);
    expect(target.listenerCount('uncaughtException')).toBe(0);
  });
});

describe('ProcessShutdown', () => {
  it('exits 0 after a signal once the app closed, and 1 when the close fails', async () => {
    const first = fixture();
    first.shutdown.stop({ signal: 'SIGTERM' });
    first.closed.resolve();
    await settle();
    expect(first.exits).toEqual([0]);

    const second = fixture();
    second.shutdown.stop({ signal: 'SIGINT' });
    second.closed.reject(new Error('close failed'));
    await settle();
    expect(second.exits).toEqual([1]);
  });
});
