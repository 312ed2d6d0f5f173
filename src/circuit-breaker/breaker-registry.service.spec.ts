import { deferred, ResilienceError } from '../common';
import { FakeClock } from '../common/fake-clock';
import { advanceClocks, installFakeTimers } from '../../test/support/fake-timers';
import type { Breaker, CircuitState } from './breaker';
import { BreakerRegistry } from './breaker-registry.service';
import { breakerSettings, DEFAULT_BREAKER_SETTINGS } from './breaker-settings';
import type { CircuitBreakerModuleOptions } from './circuit-breaker.module-definition';

// A breaker's open → half-open timer is opossum's own setTimeout: jest's fake timers hold it.

const made: BreakerRegistry[] = [];
let clock: FakeClock;

function registry(breakers: CircuitBreakerModuleOptions['breakers']): BreakerRegistry {
  const created = new BreakerRegistry({ breakers }, clock);
  made.push(created);
  return created;
}

const CONFIG: CircuitBreakerModuleOptions['breakers'] = {
  default: { volumeThreshold: 5, resetTimeoutMs: 20_000 },
  payments: { volumeThreshold: 1, resetTimeoutMs: 1_000 },
  search: {},
};

function failOnce(breaker: Breaker): Promise<unknown> {
  return breaker
    .fire(() => Promise.reject(new ResilienceError('transient', 'upstream answered 503')))
    .catch((error: unknown) => error);
}

beforeEach(() => {
  clock = new FakeClock();
  installFakeTimers(clock);
});

afterEach(() => {
  for (const item of made.splice(0)) item.onApplicationShutdown();
  jest.useRealTimers();
});

describe('BreakerRegistry', () => {
  describe('start-up', () => {
    it('has every named breaker of the config from the start, with the default settings overlaid by its own', () => {
      const breakers = registry(CONFIG);
      expect([...breakers.all()].map((breaker) => breaker.name)).toEqual(['payments', 'search']);
      expect(breakers.get('payments')?.settings).toEqual({
        ...DEFAULT_BREAKER_SETTINGS,
        volumeThreshold: 1,
        resetTimeoutMs: 1_000,
      });
      expect(breakers.get('search')?.settings).toEqual({
        ...DEFAULT_BREAKER_SETTINGS,
        volumeThreshold: 5,
        resetTimeoutMs: 20_000,
      });
      expect(breakers.snapshot()).toEqual({
        payments: { state: 'closed', failures: 0, successes: 0, tenantsOpen: [] },
        search: { state: 'closed', failures: 0, successes: 0, tenantsOpen: [] },
      });
    });

    it('runs each breaker on its own settings: one failure opens payments, not search', async () => {
      const breakers = registry(CONFIG);
      await failOnce(breakers.get('payments')!);
      await failOnce(breakers.get('search')!);
      expect(breakers.get('payments')!.state).toBe('open');
      expect(breakers.get('search')!.state).toBe('closed');
      expect(breakers.snapshot()).toEqual({
        payments: { state: 'open', failures: 1, successes: 0, tenantsOpen: [] },
        search: { state: 'closed', failures: 1, successes: 0, tenantsOpen: [] },
      });
    });

    it('starts from the built-in settings when the config has no default', () => {
      const breakers = registry({ payments: { volumeThreshold: 2 } });
      expect(breakers.get('payments')?.settings).toEqual({ ...DEFAULT_BREAKER_SETTINGS, volumeThreshold: 2 });
    });

    it('keeps the default of a field a named breaker leaves undefined', () => {
      const breakers = registry({
        default: { resetTimeoutMs: 20_000 },
        payments: { resetTimeoutMs: undefined, volumeThreshold: 3 },
      });
      expect(breakers.get('payments')?.settings).toEqual({
        ...DEFAULT_BREAKER_SETTINGS,
        resetTimeoutMs: 20_000,
        volumeThreshold: 3,
      });
    });

    it('refuses impossible settings of a named breaker with a RangeError naming it', () => {
      expect(() => registry({ payments: { errorThresholdPercentage: 0 } })).toThrow(RangeError);
      expect(() => registry({ payments: { errorThresholdPercentage: 0 } })).toThrow("breaker 'payments'");
    });
  });

  describe('register', () => {
    it('returns the same breaker for the same name', () => {
      const breakers = registry(CONFIG);
      const payments = breakers.get('payments');
      expect(breakers.register('payments')).toBe(payments);

      const created = breakers.register('render');
      expect(breakers.register('render')).toBe(created);
      expect(breakers.get('render')).toBe(created);
      expect([...breakers.all()].map((breaker) => breaker.name)).toEqual(['payments', 'search', 'render']);
    });

    it('creates a new name with the default settings and its overrides', () => {
      const breakers = registry(CONFIG);
      expect(breakers.register('render', { errorThresholdPercentage: 25, resetTimeoutMs: undefined }).settings).toEqual(
        {
          ...DEFAULT_BREAKER_SETTINGS,
          volumeThreshold: 5,
          resetTimeoutMs: 20_000,
          errorThresholdPercentage: 25,
        },
      );
      expect(breakers.register('notes').settings).toEqual({
        ...DEFAULT_BREAKER_SETTINGS,
        volumeThreshold: 5,
        resetTimeoutMs: 20_000,
      });
    });

    it('refuses overrides for a name that already exists', () => {
      const breakers = registry(CONFIG);
      expect(() => breakers.register('payments', { volumeThreshold: 2 })).toThrow(
        "breaker 'payments' is configured twice",
      );
      breakers.register('render', { volumeThreshold: 2 });
      expect(() => breakers.register('render', { volumeThreshold: 3 })).toThrow("breaker 'render' is configured twice");
      expect(breakers.get('render')?.settings.volumeThreshold).toBe(2);
    });

    it("treats 'default' as the shared settings, never as a breaker", () => {
      const breakers = registry(CONFIG);
      expect(breakers.get('default')).toBeUndefined();
      expect(Object.keys(breakers.snapshot())).not.toContain('default');
      expect(() => breakers.register('default')).toThrow("'default' is not a breaker name");
      expect(breakers.get('default')).toBeUndefined();
    });
  });

  describe('onTransition', () => {
    it('fans out the changes of state of every breaker, named or registered later', async () => {
      const breakers = registry(CONFIG);
      const render = breakers.register('render', { volumeThreshold: 1 });
      const seen: Array<[string, CircuitState, CircuitState]> = [];
      breakers.onTransition((breaker, to, from) => seen.push([breaker.name, to, from]));

      await failOnce(breakers.get('payments')!);
      await failOnce(render);
      breakers.get('search')!.forceOpen();
      render.close();

      expect(seen).toEqual([
        ['payments', 'open', 'closed'],
        ['render', 'open', 'closed'],
        ['search', 'open', 'closed'],
        ['render', 'closed', 'open'],
      ]);
    });

    it('passes the breaker itself to the listener', () => {
      const breakers = registry(CONFIG);
      const listener = jest.fn();
      breakers.onTransition(listener);
      breakers.get('search')!.forceOpen();
      expect(listener).toHaveBeenCalledWith(breakers.get('search'), 'open', 'closed');
    });

    it('stops calling a listener once its disposer has run', () => {
      const breakers = registry(CONFIG);
      const kept = jest.fn();
      const removed = jest.fn();
      breakers.onTransition(kept);
      const dispose = breakers.onTransition(removed);
      dispose();
      breakers.get('payments')!.forceOpen();
      expect(kept).toHaveBeenCalledTimes(1);
      expect(removed).not.toHaveBeenCalled();
    });
  });

  describe('onSlowCall and onProbe', () => {
    it('fan out the slow calls and half-open outcomes of every breaker, with the breaker', async () => {
      const breakers = registry({ default: { volumeThreshold: 1, resetTimeoutMs: 1_000, slowCallDurationMs: 100 } });
      const slow = breakers.register('render');
      const probed = breakers.register('payments');
      const slowCalls: string[] = [];
      const probes: string[] = [];
      breakers.onSlowCall((breaker) => slowCalls.push(breaker.name));
      const dispose = breakers.onProbe((breaker, outcome) => probes.push(`${breaker.name} ${outcome}`));

      const answer = deferred<string>();
      const fired = slow.fire(() => answer.promise);
      advanceClocks(clock, 101);
      answer.resolve('ok');
      await fired;
      await failOnce(probed);
      advanceClocks(clock, 1_000);
      await probed.fire(async () => 'ok');
      dispose();
      await failOnce(probed);
      advanceClocks(clock, 1_000);
      await failOnce(probed);

      expect(slowCalls).toEqual(['render']);
      expect(probes).toEqual(['payments succeeded']);
    });
  });

  describe('onApplicationShutdown', () => {
    it('shuts every breaker down, leaving no timer behind', async () => {
      const breakers = registry(CONFIG);
      const render = breakers.register('render', { volumeThreshold: 1 });
      await failOnce(breakers.get('payments')!);
      await failOnce(render);
      breakers.get('search')!.forceOpen();
      // opossum keeps a reset timer for each open circuit, the one an operator holds open too.
      expect(jest.getTimerCount()).toBe(3);
      const listener = jest.fn();
      breakers.onTransition(listener);

      breakers.onApplicationShutdown();
      expect(jest.getTimerCount()).toBe(0);
      advanceClocks(clock, 60_000);
      render.close();
      expect(listener).not.toHaveBeenCalled();
    });
  });
});

describe('breakerSettings', () => {
  it('is the built-in settings with nothing given', () => {
    expect(breakerSettings()).toEqual(DEFAULT_BREAKER_SETTINGS);
    expect(breakerSettings(undefined, {})).toEqual(DEFAULT_BREAKER_SETTINGS);
    expect(DEFAULT_BREAKER_SETTINGS).toEqual({
      errorThresholdPercentage: 50,
      volumeThreshold: 10,
      resetTimeoutMs: 30_000,
      rollingCountTimeoutMs: 10_000,
      // Opt-in: no call is slow without slowCallDurationMs, one probe decides, the open time never grows.
      slowCallRatePercentage: 50,
      halfOpenProbes: 1,
      backoffMultiplier: 1,
    });
  });

  it('applies the overrides in order, later ones winning, and skips undefined fields', () => {
    expect(
      breakerSettings({ volumeThreshold: 3, resetTimeoutMs: 700 }, undefined, {
        volumeThreshold: undefined,
        errorThresholdPercentage: 25,
        resetTimeoutMs: 900,
      }),
    ).toEqual({ ...DEFAULT_BREAKER_SETTINGS, errorThresholdPercentage: 25, volumeThreshold: 3, resetTimeoutMs: 900 });
  });

  it('leaves the built-in settings and the overrides as they were', () => {
    const override = { volumeThreshold: 3 };
    const settings = breakerSettings(override);
    settings.resetTimeoutMs = 1;
    expect(override).toEqual({ volumeThreshold: 3 });
    expect(DEFAULT_BREAKER_SETTINGS.volumeThreshold).toBe(10);
    expect(DEFAULT_BREAKER_SETTINGS.resetTimeoutMs).toBe(30_000);
    expect(Object.isFrozen(DEFAULT_BREAKER_SETTINGS)).toBe(true);
  });
});
