import { Logger, type LoggerService } from '@nestjs/common';
import { ResilienceError } from '../common';
import { FakeClock } from '../common/fake-clock';
import { EventLedger } from '../events';
import { installFakeTimers } from '../../test/support/fake-timers';
import { BreakerRegistry } from './breaker-registry.service';
import { BreakerTransitionsRecorder } from './breaker-transitions.recorder';

// A breaker's open → half-open timer is opossum's own setTimeout: jest's fake timers hold it.

describe('BreakerTransitionsRecorder', () => {
  let clock: FakeClock;
  let registry: BreakerRegistry;
  let ledger: EventLedger;
  let recorder: BreakerTransitionsRecorder;
  let written: Array<[string, Record<string, unknown>]>;

  beforeEach(() => {
    clock = new FakeClock(Date.UTC(2026, 0, 1));
    installFakeTimers(clock);
    written = [];
    const keep = (level: string) => (message: Record<string, unknown>) => written.push([level, message]);
    Logger.overrideLogger({ log: keep('log'), warn: keep('warn'), error: keep('error') } as LoggerService);
    registry = new BreakerRegistry(
      { breakers: { search: { volumeThreshold: 4, errorThresholdPercentage: 50, resetTimeoutMs: 5_000 } } },
      clock,
    );
    ledger = new EventLedger(10, clock);
    recorder = new BreakerTransitionsRecorder(registry, ledger);
    recorder.onModuleInit();
  });

  afterEach(() => {
    recorder.onApplicationShutdown();
    registry.onApplicationShutdown();
    Logger.overrideLogger(false);
    jest.useRealTimers();
  });

  it('logs an opening at warn and a closing at log, and puts both in the ledger', () => {
    const search = registry.register('search');

    search.forceOpen();
    search.close();

    expect(written).toEqual([
      ['warn', { msg: 'breaker search open', event: 'breaker', breaker: 'search', state: 'open' }],
      ['log', { msg: 'breaker search closed', event: 'breaker', breaker: 'search', state: 'closed' }],
    ]);
    expect(ledger.recent().map((event) => event.status)).toEqual(['breaker_open', 'breaker_closed']);
  });

  it('logs at warn a tenant the breaker starts refusing on its own', async () => {
    const search = registry.register('search');
    const failAs = (tenant: string) =>
      search
        .fire(() => Promise.reject(new ResilienceError('transient', 'upstream answered 503')), tenant)
        .catch(() => 0);
    await search.fire(async () => 'ok', 'bravo');
    await search.fire(async () => 'ok', 'charlie');
    for (let i = 0; i < 4; i++) await failAs('alpha');

    expect(written).toEqual([
      [
        'warn',
        {
          msg: 'breaker search refuses tenant alpha on its own',
          event: 'breaker_tenant',
          breaker: 'search',
          tenant: 'alpha',
        },
      ],
    ]);
  });

  it('stops listening at application shutdown, after the drain', () => {
    const search = registry.register('search');
    recorder.onApplicationShutdown();

    search.forceOpen();

    expect(written).toEqual([]);
  });
});
