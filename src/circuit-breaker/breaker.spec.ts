import { HttpException } from '@nestjs/common';
import { deferred, type ErrorKind, ResilienceError } from '../common';
import { FakeClock } from '../common/fake-clock';
import { breakersInVirtualTime } from '../../test/support/breakers-in-virtual-time';
import { advanceClocks } from '../../test/support/fake-timers';
import { stopped, transient } from '../../test/support/breaker-attempts';
import { Breaker, type CircuitState, countsAgainstBreaker, type OpossumCircuit } from './breaker';
import type { BreakerSettings } from './breaker-settings';

// The window and Retry-After go by the injected FakeClock; opossum's open → half-open timer is
// its own setTimeout, held by jest's fake timers. advanceClocks moves both.

const SETTINGS: BreakerSettings = {
  errorThresholdPercentage: 50,
  volumeThreshold: 4,
  resetTimeoutMs: 5_000,
  rollingCountTimeoutMs: 10_000,
};

const made: Breaker[] = [];
let clock: FakeClock;

function breaker(overrides: Partial<BreakerSettings> = {}): Breaker {
  const created = new Breaker('search', { ...SETTINGS, ...overrides }, clock);
  made.push(created);
  return created;
}

/** The names of the opossum circuit's open, halfOpen and close events, as they come. */
function eventsOf(circuit: OpossumCircuit): string[] {
  const events: string[] = [];
  circuit.on('open', () => events.push('open'));
  circuit.on('halfOpen', () => events.push('halfOpen'));
  circuit.on('close', () => events.push('close'));
  return events;
}

/** One attempt that fails with `error`; resolves to what the caller got. */
function fail(target: Breaker, error: unknown = transient()): Promise<unknown> {
  return target
    .fire(() => Promise.reject(error))
    .then(
      () => {
        throw new Error('expected the attempt to fail');
      },
      (reason: unknown) => reason,
    );
}

async function failTimes(target: Breaker, times: number, error: () => unknown = transient): Promise<void> {
  for (let i = 0; i < times; i++) await fail(target, error());
}

function succeed(target: Breaker): Promise<string> {
  return target.fire(async () => 'ok');
}

/** What `fire` refuses with, checking the action never ran. */
async function refusalOf(target: Breaker): Promise<ResilienceError> {
  const action = jest.fn(async () => 'ran');
  const reason = await target.fire(action).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(action).not.toHaveBeenCalled();
  expect(reason).toBeInstanceOf(ResilienceError);
  return reason as ResilienceError;
}

/** A breaker that has just opened on `SETTINGS.volumeThreshold` transient failures. */
async function opened(overrides: Partial<BreakerSettings> = {}): Promise<Breaker> {
  const target = breaker(overrides);
  await failTimes(target, target.settings.volumeThreshold);
  expect(target.state).toBe('open');
  return target;
}

breakersInVirtualTime(made, (fresh) => (clock = fresh));

describe('Breaker', () => {
  describe('closed', () => {
    it('passes the action’s result and error through untouched', async () => {
      const target = breaker();
      const error = transient();
      await expect(succeed(target)).resolves.toBe('ok');
      await expect(fail(target, error)).resolves.toBe(error);
      expect(target.state).toBe('closed');
    });

    it('stays closed while the window holds fewer attempts than volumeThreshold, all of them failed', async () => {
      const target = breaker({ volumeThreshold: 4 });
      await failTimes(target, 3);
      expect(target.snapshot()).toEqual({ state: 'closed', failures: 3, successes: 0, tenantsOpen: [] });
      await expect(succeed(target)).resolves.toBe('ok');

      await fail(target);
      expect(target.state).toBe('open');
    });

    it('opens once failures exceed errorThresholdPercentage with the volume met, not when they only reach it', async () => {
      const target = breaker({ errorThresholdPercentage: 50, volumeThreshold: 4 });
      await succeed(target);
      await succeed(target);
      await failTimes(target, 2);
      expect(target.snapshot()).toEqual({ state: 'closed', failures: 2, successes: 2, tenantsOpen: [] });

      await fail(target);
      expect(target.state).toBe('open');
    });

    it('opens on the first failure with volumeThreshold 1', async () => {
      const target = breaker({ volumeThreshold: 1 });
      await fail(target);
      expect(target.state).toBe('open');
    });
  });

  describe('open', () => {
    it('refuses with circuit_open (503, JSON-RPC -32008) without calling the action', async () => {
      const target = await opened();
      const refusal = await refusalOf(target);
      expect(refusal.kind).toBe('circuit_open');
      expect(refusal.status).toBe(503);
      expect(refusal.jsonrpcCode).toBe(-32008);
      expect(refusal.message).toContain("'search'");
      expect(refusal.retryAfterMs).toBe(5_000);
      expect(target.refusal()).toMatchObject({ kind: 'circuit_open', retryAfterMs: 5_000 });
    });

    it('gives a Retry-After of the time left until it half-opens, shrinking as time passes', async () => {
      const target = await opened({ resetTimeoutMs: 5_000 });
      advanceClocks(clock, 1_200);
      expect((await refusalOf(target)).retryAfterMs).toBe(3_800);
      advanceClocks(clock, 3_799);
      expect((await refusalOf(target)).retryAfterMs).toBe(1);
      expect(target.state).toBe('open');
    });

    it('counts no refused call in its window', async () => {
      const target = await opened();
      await refusalOf(target);
      await refusalOf(target);
      expect(target.snapshot()).toEqual({ state: 'open', failures: 4, successes: 0, tenantsOpen: [] });
    });

    it('half-opens once resetTimeoutMs has passed', async () => {
      const target = await opened({ resetTimeoutMs: 5_000 });
      advanceClocks(clock, 4_999);
      expect(target.state).toBe('open');
      advanceClocks(clock, 1);
      expect(target.state).toBe('half_open');
      expect(target.refusal()).toBeUndefined();
    });
  });

  describe('half open', () => {
    it('lets exactly one probe through and refuses a second call meanwhile with a Retry-After of one second', async () => {
      const target = await opened();
      advanceClocks(clock, SETTINGS.resetTimeoutMs);
      const answer = deferred<string>();
      const probeAction = jest.fn(() => answer.promise);
      const probe = target.fire(probeAction);
      expect(probeAction).toHaveBeenCalledTimes(1);

      const refusal = await refusalOf(target);
      expect(refusal.kind).toBe('circuit_open');
      expect(refusal.retryAfterMs).toBe(1_000);
      expect(target.state).toBe('half_open');

      answer.resolve('probed');
      await expect(probe).resolves.toBe('probed');
    });

    it('closes with an empty window when the probe succeeds, so one new failure does not reopen it', async () => {
      const target = await opened({ volumeThreshold: 4, resetTimeoutMs: 5_000, rollingCountTimeoutMs: 10_000 });
      advanceClocks(clock, 5_000);
      await expect(succeed(target)).resolves.toBe('ok');
      expect(target.snapshot()).toEqual({ state: 'closed', failures: 0, successes: 0, tenantsOpen: [] });

      // The four failures that opened it are still inside the 10 s window by the clock.
      await fail(target);
      expect(target.snapshot()).toEqual({ state: 'closed', failures: 1, successes: 0, tenantsOpen: [] });
      await expect(succeed(target)).resolves.toBe('ok');
    });

    it('opens again with a fresh reset timer when the probe fails', async () => {
      const target = await opened({ resetTimeoutMs: 5_000 });
      advanceClocks(clock, 5_000);
      advanceClocks(clock, 700);
      const error = transient();
      await expect(fail(target, error)).resolves.toBe(error);
      expect(target.state).toBe('open');
      expect((await refusalOf(target)).retryAfterMs).toBe(5_000);

      advanceClocks(clock, 4_999);
      expect(target.state).toBe('open');
      advanceClocks(clock, 1);
      expect(target.state).toBe('half_open');
    });

    it('closes when the probe fails with an error that does not count: the dependency answered', async () => {
      const target = await opened();
      advanceClocks(clock, SETTINGS.resetTimeoutMs);
      const error = new ResilienceError('schema', 'upstream answered 422');
      await expect(fail(target, error)).resolves.toBe(error);
      expect(target.state).toBe('closed');
    });
  });

  describe('a stopped attempt: neither a success nor a failure', () => {
    /** A breaker half open, its window as it opened. */
    async function halfOpened(tenant?: string): Promise<Breaker> {
      const target = await opened();
      advanceClocks(clock, SETTINGS.resetTimeoutMs);
      expect(target.state).toBe('half_open');
      if (tenant !== undefined) expect(target.refusal(tenant)).toBeUndefined();
      return target;
    }

    it.each([
      ['an anonymous probe', undefined],
      ['a tenant’s probe', 'alpha'],
    ])(
      'stays half open when %s is stopped, counts nothing, and lets the next call through as the probe',
      async (_who, tenant) => {
        const target = await halfOpened(tenant);
        const before = target.snapshot();
        const transitions = jest.fn();
        target.onStateChange(transitions);
        const events = eventsOf(target.circuit);
        const gone = deferred<string>();
        const probe = target.fire(() => gone.promise, tenant).catch((error: unknown) => error);
        expect(target.refusal()).toMatchObject({ kind: 'circuit_open', retryAfterMs: 1_000 });

        const error = stopped();
        gone.reject(error);
        await expect(probe).resolves.toBe(error);

        expect(target.snapshot()).toEqual(before);
        expect(target.state).toBe('half_open');
        expect(events).toEqual([]);
        expect(transitions).not.toHaveBeenCalled();
        // The probe slot is free again: one call goes through, and only one.
        const next = deferred<string>();
        const nextAction = jest.fn(() => next.promise);
        const nextProbe = target.fire(nextAction, tenant);
        expect(nextAction).toHaveBeenCalledTimes(1);
        expect((await refusalOf(target)).retryAfterMs).toBe(1_000);
        next.resolve('ok');
        await expect(nextProbe).resolves.toBe('ok');
        expect(target.snapshot()).toEqual({ state: 'closed', failures: 0, successes: 0, tenantsOpen: [] });
      },
    );

    it.each([
      ['anonymous', undefined],
      ['of a tenant', 'alpha'],
    ])('opens again when the probe after a stopped one (%s) fails', async (_who, tenant) => {
      const target = await halfOpened(tenant);
      await target.fire(() => Promise.reject(stopped()), tenant).catch(() => undefined);

      await target.fire(() => Promise.reject(transient()), tenant).catch(() => undefined);

      expect(target.state).toBe('open');
      expect((await refusalOf(target)).retryAfterMs).toBe(SETTINGS.resetTimeoutMs);
    });

    it('frees the probe slot only for the probe: an older attempt stopped while the probe is out changes nothing', async () => {
      const target = breaker();
      const older = deferred<string>();
      const olderCall = target.fire(() => older.promise).catch((error: unknown) => error);
      await failTimes(target, SETTINGS.volumeThreshold);
      advanceClocks(clock, SETTINGS.resetTimeoutMs);
      const answer = deferred<string>();
      const probe = target.fire(() => answer.promise);

      older.reject(stopped());
      await olderCall;

      expect(target.state).toBe('half_open');
      expect((await refusalOf(target)).retryAfterMs).toBe(1_000);
      answer.resolve('ok');
      await probe;
      expect(target.state).toBe('closed');
    });

    it('adds nothing to a closed circuit’s window: stopped attempts never make up volumeThreshold', async () => {
      const target = breaker({ volumeThreshold: 4 });
      await failTimes(target, 3);
      await failTimes(target, 10, stopped);
      expect(target.snapshot()).toEqual({ state: 'closed', failures: 3, successes: 0, tenantsOpen: [] });

      // Four failures of four attempts that ended: it opens, undiluted by the ten that were stopped.
      await fail(target);
      expect(target.state).toBe('open');
    });

    it('adds nothing to the window for a tenant’s stopped attempts either', async () => {
      const target = breaker({ volumeThreshold: 4 });
      for (let i = 0; i < 10; i++) await target.fire(() => Promise.reject(stopped()), 'alpha').catch(() => undefined);

      expect(target.snapshot()).toEqual({ state: 'closed', failures: 0, successes: 0, tenantsOpen: [] });
    });
  });

  describe('what counts against it', () => {
    it.each<ErrorKind>(['transient', 'timeout'])('opens on %s failures', async (kind) => {
      const target = breaker({ volumeThreshold: 4 });
      await failTimes(target, 4, () => new ResilienceError(kind, 'failed'));
      expect(target.state).toBe('open');
    });

    it.each<[string, ErrorKind]>([
      ['a 4xx answer (schema)', 'schema'],
      ['an unknown tool (not_found)', 'not_found'],
      ['a bad request (invalid_request)', 'invalid_request'],
      ['a refused destination (egress_denied)', 'egress_denied'],
      ['a rate limit (rate_limited)', 'rate_limited'],
      ['a full queue (queue_full)', 'queue_full'],
    ])('never opens on %s, however many', async (_what, kind) => {
      const target = breaker({ volumeThreshold: 4 });
      for (let i = 0; i < 25; i++) {
        const error = new ResilienceError(kind, 'refused');
        await expect(fail(target, error)).resolves.toBe(error);
      }
      expect(target.snapshot()).toEqual({ state: 'closed', failures: 0, successes: 25, tenantsOpen: [] });
    });

    it('never opens on callers that left (stopped), however many, and counts them nowhere', async () => {
      const target = breaker({ volumeThreshold: 4 });
      for (let i = 0; i < 25; i++) {
        const error = stopped();
        await expect(fail(target, error)).resolves.toBe(error);
      }
      expect(target.snapshot()).toEqual({ state: 'closed', failures: 0, successes: 0, tenantsOpen: [] });
    });

    it('opens on a route’s HttpException 503 and never on its 400', async () => {
      const target = breaker({ volumeThreshold: 4 });
      await failTimes(target, 25, () => new HttpException('bad input', 400));
      expect(target.state).toBe('closed');

      const other = breaker({ volumeThreshold: 4 });
      await failTimes(other, 4, () => new HttpException('dependency down', 503));
      expect(other.state).toBe('open');
    });

    it.each([502, 503, 504])('counts an HttpException-like object with status %d', (status) => {
      expect(countsAgainstBreaker(new HttpException('dependency failed', status))).toBe(true);
      expect(countsAgainstBreaker({ getStatus: () => status })).toBe(true);
    });

    it.each([400, 404, 429, 500])('does not count an HttpException-like object with status %d', (status) => {
      expect(countsAgainstBreaker(new HttpException('refused', status))).toBe(false);
      expect(countsAgainstBreaker({ getStatus: () => status })).toBe(false);
    });

    it.each([
      ['a plain Error', new Error('boom')],
      ['null', null],
      ['undefined', undefined],
      ['a string', 'transient'],
      ['an object whose getStatus is not a function', { getStatus: 503 }],
      ['a look-alike of a ResilienceError', { kind: 'transient', message: 'x' }],
    ])('does not count %s', (_what, error) => {
      expect(countsAgainstBreaker(error)).toBe(false);
    });
  });

  describe('what it does not do (lanes and attempts own these)', () => {
    it('bounds no concurrency: every attempt fired runs at once', async () => {
      const target = breaker();
      const gate = deferred<string>();
      const action = jest.fn(() => gate.promise);

      const attempts = Array.from({ length: 100 }, () => target.fire(action));
      expect(action).toHaveBeenCalledTimes(100);

      gate.resolve('ok');
      await expect(Promise.all(attempts)).resolves.toHaveLength(100);
    });

    it('sets no timer and aborts nothing per attempt: a pending attempt only waits to be counted', () => {
      const target = breaker();
      void target.fire(() => new Promise<never>(() => undefined));

      expect(jest.getTimerCount()).toBe(0);
      expect(target.snapshot()).toEqual({ state: 'closed', failures: 0, successes: 0, tenantsOpen: [] });
    });

    it('judges the share of attempts that ended: attempts still in flight neither dilute nor count', async () => {
      const target = breaker({ volumeThreshold: 2, errorThresholdPercentage: 50 });
      const pending = Array.from({ length: 3 }, () => target.fire(() => new Promise<never>(() => undefined)));
      expect(pending).toHaveLength(3);

      await failTimes(target, 2);

      expect(target.snapshot()).toEqual({ state: 'open', failures: 2, successes: 0, tenantsOpen: [] });
    });
  });

  describe('rolling window', () => {
    it('still counts failures from just inside rollingCountTimeoutMs', async () => {
      const target = breaker({ volumeThreshold: 4, rollingCountTimeoutMs: 10_000 });
      await failTimes(target, 3);
      advanceClocks(clock, 9_000);
      await fail(target);
      expect(target.state).toBe('open');
    });

    it('forgets failures older than rollingCountTimeoutMs', async () => {
      const target = breaker({ volumeThreshold: 4, rollingCountTimeoutMs: 10_000 });
      await failTimes(target, 3);
      advanceClocks(clock, 10_000);
      await fail(target);
      expect(target.state).toBe('closed');
      expect(target.snapshot()).toEqual({ state: 'closed', failures: 1, successes: 0, tenantsOpen: [] });
    });

    it('shows only the attempts of the window in its snapshot', async () => {
      const target = breaker({ volumeThreshold: 4, rollingCountTimeoutMs: 10_000 });
      await failTimes(target, 3);
      advanceClocks(clock, 4_000);
      await succeed(target);
      advanceClocks(clock, 6_000);
      expect(target.snapshot()).toEqual({ state: 'closed', failures: 0, successes: 1, tenantsOpen: [] });
      advanceClocks(clock, 4_000);
      expect(target.snapshot()).toEqual({ state: 'closed', failures: 0, successes: 0, tenantsOpen: [] });
    });

    it('does not hold old failures against a long attempt that fails after the window moved on', async () => {
      const target = breaker({ volumeThreshold: 4, rollingCountTimeoutMs: 10_000 });
      await failTimes(target, 3);
      const slow = deferred<string>();
      const outcome = target.fire(() => slow.promise).catch((error: unknown) => error);
      expect(target.state).toBe('closed');

      advanceClocks(clock, 30_000);
      slow.reject(new ResilienceError('timeout', 'attempt timed out'));
      await outcome;
      // Only the one failure of the last 10 s may count: fewer attempts than volumeThreshold.
      expect(target.state).toBe('closed');
      expect(target.snapshot()).toEqual({ state: 'closed', failures: 1, successes: 0, tenantsOpen: [] });
    });
  });

  describe('operators', () => {
    it('forceOpen() holds it open past resetTimeoutMs, never half-opening, until close()', async () => {
      const target = breaker({ resetTimeoutMs: 5_000 });
      target.forceOpen();
      expect(target.state).toBe('open');
      expect((await refusalOf(target)).retryAfterMs).toBe(5_000);

      advanceClocks(clock, 60_000);
      expect(target.state).toBe('open');
      const refusal = await refusalOf(target);
      expect(refusal.kind).toBe('circuit_open');
      expect(refusal.retryAfterMs).toBe(5_000);

      target.close();
      expect(target.state).toBe('closed');
      await expect(succeed(target)).resolves.toBe('ok');
    });

    it('forceOpen() holds an open circuit open past the time it would have half-opened', async () => {
      const target = await opened({ resetTimeoutMs: 5_000 });
      advanceClocks(clock, 2_000);
      target.forceOpen();
      advanceClocks(clock, 10_000);
      expect(target.state).toBe('open');
      await refusalOf(target);
    });

    it('forceOpen() holds opossum open too: when its reset timer half-opens it, the breaker opens it again and reports nothing', async () => {
      const target = breaker({ resetTimeoutMs: 5_000 });
      target.forceOpen();
      expect(target.circuit.opened).toBe(true);
      const transitions = jest.fn();
      target.onStateChange(transitions);
      const events = eventsOf(target.circuit);

      advanceClocks(clock, 15_000);

      expect(target.circuit.opened).toBe(true);
      expect([...events].sort()).toEqual(['halfOpen', 'halfOpen', 'halfOpen', 'open', 'open', 'open']);
      expect(transitions).not.toHaveBeenCalled();
      await refusalOf(target);
    });

    it('forceOpen() is not undone by a late success of an attempt that started before it', async () => {
      const target = breaker({ resetTimeoutMs: 5_000 });
      const slow = deferred<string>();
      const late = target.fire(() => slow.promise);
      target.forceOpen();
      advanceClocks(clock, 5_000);

      slow.resolve('late');
      await expect(late).resolves.toBe('late');

      expect(target.state).toBe('open');
      expect(target.circuit.opened).toBe(true);
      await refusalOf(target);
    });

    it('close() closes an open circuit at once and empties the window', async () => {
      const target = await opened({ volumeThreshold: 4 });
      target.close();
      expect(target.snapshot()).toEqual({ state: 'closed', failures: 0, successes: 0, tenantsOpen: [] });
      await failTimes(target, 3);
      expect(target.state).toBe('closed');
    });

    it('close() empties the window of a closed circuit', async () => {
      const target = breaker({ volumeThreshold: 4 });
      await failTimes(target, 3);
      target.close();
      expect(target.snapshot()).toEqual({ state: 'closed', failures: 0, successes: 0, tenantsOpen: [] });
      await fail(target);
      expect(target.state).toBe('closed');
    });
  });

  describe('onStateChange', () => {
    it('reports each transition once with (to, from)', async () => {
      const target = breaker({ volumeThreshold: 2, resetTimeoutMs: 5_000 });
      const seen: Array<[CircuitState, CircuitState]> = [];
      target.onStateChange((to, from) => seen.push([to, from]));

      await failTimes(target, 2);
      await refusalOf(target);
      advanceClocks(clock, 5_000);
      await fail(target);
      advanceClocks(clock, 5_000);
      await succeed(target);
      await succeed(target);
      target.forceOpen();
      target.forceOpen();
      advanceClocks(clock, 5_000);
      target.close();
      target.close();

      expect(seen).toEqual([
        ['open', 'closed'],
        ['half_open', 'open'],
        ['open', 'half_open'],
        ['half_open', 'open'],
        ['closed', 'half_open'],
        ['open', 'closed'],
        ['closed', 'open'],
      ]);
    });

    it('stops calling a listener once its disposer has run', async () => {
      const target = breaker({ volumeThreshold: 1 });
      const kept = jest.fn();
      const removed = jest.fn();
      target.onStateChange(kept);
      const dispose = target.onStateChange(removed);
      dispose();

      await fail(target);
      expect(kept).toHaveBeenCalledWith('open', 'closed');
      expect(removed).not.toHaveBeenCalled();
    });
  });

  describe('circuit', () => {
    it('is the opossum circuit, named after the breaker, whose events follow its changes of state', async () => {
      const target = breaker({ volumeThreshold: 1, resetTimeoutMs: 5_000 });
      const events = eventsOf(target.circuit);

      await fail(target);
      advanceClocks(clock, 5_000);
      await succeed(target);

      expect(target.circuit.name).toBe('search');
      expect(events).toEqual(['open', 'halfOpen', 'close']);
      expect(target.circuit.closed).toBe(true);
    });
  });

  describe('snapshot', () => {
    it('gives the state and the failures and successes of the window', async () => {
      const target = breaker({ volumeThreshold: 4 });
      expect(target.snapshot()).toEqual({ state: 'closed', failures: 0, successes: 0, tenantsOpen: [] });
      await succeed(target);
      await succeed(target);
      await fail(target);
      expect(target.snapshot()).toEqual({ state: 'closed', failures: 1, successes: 2, tenantsOpen: [] });
      await failTimes(target, 2);
      expect(target.snapshot()).toEqual({ state: 'open', failures: 3, successes: 2, tenantsOpen: [] });
      advanceClocks(clock, SETTINGS.resetTimeoutMs);
      expect(target.snapshot().state).toBe('half_open');
    });
  });

  describe('settings', () => {
    it.each<[string, Partial<BreakerSettings>]>([
      ['errorThresholdPercentage 0', { errorThresholdPercentage: 0 }],
      ['errorThresholdPercentage 101', { errorThresholdPercentage: 101 }],
      ['errorThresholdPercentage NaN', { errorThresholdPercentage: Number.NaN }],
      ['volumeThreshold 0', { volumeThreshold: 0 }],
      ['volumeThreshold 1.5', { volumeThreshold: 1.5 }],
      ['volumeThreshold NaN', { volumeThreshold: Number.NaN }],
      ['volumeThreshold Infinity', { volumeThreshold: Number.POSITIVE_INFINITY }],
      ['resetTimeoutMs 0', { resetTimeoutMs: 0 }],
      ['resetTimeoutMs -1', { resetTimeoutMs: -1 }],
      ['resetTimeoutMs Infinity', { resetTimeoutMs: Number.POSITIVE_INFINITY }],
      ['resetTimeoutMs NaN', { resetTimeoutMs: Number.NaN }],
      ['rollingCountTimeoutMs 9', { rollingCountTimeoutMs: 9 }],
      ['rollingCountTimeoutMs Infinity', { rollingCountTimeoutMs: Number.POSITIVE_INFINITY }],
      ['rollingCountTimeoutMs NaN', { rollingCountTimeoutMs: Number.NaN }],
    ])('refuses %s with a RangeError naming the breaker', (_what, overrides) => {
      expect(() => new Breaker('search', { ...SETTINGS, ...overrides }, clock)).toThrow(
        expect.objectContaining({ name: 'RangeError', message: expect.stringContaining("breaker 'search'") }),
      );
    });

    it('accepts the smallest and largest settings allowed', () => {
      const low = breaker({
        errorThresholdPercentage: 1,
        volumeThreshold: 1,
        resetTimeoutMs: 1,
        rollingCountTimeoutMs: 10,
      });
      const high = breaker({ errorThresholdPercentage: 100 });
      expect(low.state).toBe('closed');
      expect(high.state).toBe('closed');
    });
  });

  describe('shutdown', () => {
    it('clears the reset timer of an open circuit', async () => {
      const target = await opened();
      expect(jest.getTimerCount()).toBe(1);
      target.shutdown();
      expect(jest.getTimerCount()).toBe(0);
    });

    it('clears the reset timer opossum keeps for a circuit an operator holds open', async () => {
      const target = await opened();
      target.forceOpen();
      // opossum sets its reset timer whenever it opens, and the breaker opens it again while held.
      advanceClocks(clock, 3 * SETTINGS.resetTimeoutMs);
      expect(jest.getTimerCount()).toBe(1);
      target.shutdown();
      expect(jest.getTimerCount()).toBe(0);
    });

    it('refuses nothing after it: a call runs straight through, as its contract says', async () => {
      const target = breaker();
      target.shutdown();
      const action = jest.fn(async () => 'ok');
      await expect(target.fire(action)).resolves.toBe('ok');
      expect(action).toHaveBeenCalledTimes(1);
      expect(target.refusal()).toBeUndefined();
    });

    it('reports no transition after it', async () => {
      const target = breaker();
      const listener = jest.fn();
      target.onStateChange(listener);
      target.shutdown();
      target.forceOpen();
      target.close();
      expect(listener).not.toHaveBeenCalled();
    });
  });
});

describe('Breaker with tenants', () => {
  /** One attempt of `tenant` that fails with a counted failure; resolves to what it got. */
  const failAs = (target: Breaker, tenant: string) =>
    target
      .fire(() => Promise.reject(transient()), tenant)
      .then(
        () => {
          throw new Error('expected the attempt to fail');
        },
        (reason: unknown) => reason as ResilienceError,
      );
  const succeedAs = (target: Breaker, tenant: string) => target.fire(async () => 'ok', tenant);

  it('refuses only the tenant whose own calls fail while the others succeed, and stays closed for them', async () => {
    const target = breaker();
    await succeedAs(target, 'bravo');
    await succeedAs(target, 'charlie');
    // Four failures of alpha's would open a shared breaker (4 of 6 attempts, volumeThreshold 4).
    for (let i = 0; i < 4; i++) await failAs(target, 'alpha');

    expect(target.state).toBe('closed');
    const refused = await failAs(target, 'alpha');
    expect(refused).toMatchObject({ kind: 'circuit_open', retryAfterMs: SETTINGS.resetTimeoutMs });
    expect(refused.message).toContain('for this tenant');
    await expect(succeedAs(target, 'bravo')).resolves.toBe('ok');
    expect(target.refusal('bravo')).toBeUndefined();
    expect(target.refusal()).toBeUndefined();
    // Alpha's failures are taken out of the shared window: only the others' outcomes are left.
    expect(target.snapshot()).toEqual({
      state: 'closed',
      failures: 0,
      successes: 3,
      tenantsOpen: [{ tenant: 'alpha', retryAfterMs: SETTINGS.resetTimeoutMs }],
    });
    expect(target.tenantsOpen).toBe(1);
  });

  it('opens for everyone when every tenant’s calls fail: the dependency is failing', async () => {
    const target = breaker();
    await succeedAs(target, 'charlie');
    await failAs(target, 'alpha');
    await failAs(target, 'bravo');
    await failAs(target, 'alpha');
    await failAs(target, 'bravo');

    expect(target.state).toBe('open');
    expect(target.refusal('charlie')).toMatchObject({ kind: 'circuit_open' });
    expect(target.snapshot().tenantsOpen).toEqual([]);
  });

  it('opens for everyone when a tenant fails alone: nobody else’s success tells it from the dependency', async () => {
    const target = breaker();
    for (let i = 0; i < 4; i++) await failAs(target, 'alpha');

    expect(target.state).toBe('open');
    expect(target.snapshot().tenantsOpen).toEqual([]);
  });

  it('refuses each failing tenant on its own in turn while another succeeds, and never the one that succeeds', async () => {
    const target = breaker();
    for (let i = 0; i < 2; i++) await succeedAs(target, 'charlie');
    for (let i = 0; i < 3; i++) await failAs(target, 'alpha');
    for (let i = 0; i < 2; i++) await succeedAs(target, 'charlie');
    for (let i = 0; i < 5; i++) await failAs(target, 'bravo');

    expect(target.state).toBe('closed');
    expect(target.refusal('alpha')?.kind).toBe('circuit_open');
    expect(target.refusal('bravo')?.kind).toBe('circuit_open');
    expect(target.refusal('charlie')).toBeUndefined();
  });

  it('lets the refused tenant send one probe after resetTimeoutMs: a success serves it again', async () => {
    const target = breaker();
    await succeedAs(target, 'bravo');
    for (let i = 0; i < 4; i++) await failAs(target, 'alpha');
    expect(target.refusal('alpha')?.kind).toBe('circuit_open');

    await advanceClocks(clock, SETTINGS.resetTimeoutMs - 1);
    expect(target.refusal('alpha')?.retryAfterMs).toBe(1);
    await advanceClocks(clock, 1);
    expect(target.refusal('alpha')).toBeUndefined();
    const gate = deferred<string>();
    const probe = target.fire(() => gate.promise, 'alpha');
    // While the probe is out, alpha's other calls wait.
    expect(target.refusal('alpha')).toMatchObject({ kind: 'circuit_open', retryAfterMs: 1_000 });
    gate.resolve('ok');
    await probe;

    expect(target.refusal('alpha')).toBeUndefined();
    expect(target.snapshot().tenantsOpen).toEqual([]);
  });

  it('refuses the tenant again when its probe fails, without counting it against the others', async () => {
    const target = breaker();
    await succeedAs(target, 'bravo');
    for (let i = 0; i < 4; i++) await failAs(target, 'alpha');
    await advanceClocks(clock, SETTINGS.resetTimeoutMs);
    const before = target.snapshot();

    await failAs(target, 'alpha');

    expect(target.refusal('alpha')).toMatchObject({ kind: 'circuit_open', retryAfterMs: SETTINGS.resetTimeoutMs });
    expect(target.snapshot().failures).toBe(before.failures);
    expect(target.state).toBe('closed');
  });

  it('forgets the tenants it refused when an operator closes it', async () => {
    const target = breaker();
    await succeedAs(target, 'bravo');
    for (let i = 0; i < 4; i++) await failAs(target, 'alpha');

    target.close();

    expect(target.refusal('alpha')).toBeUndefined();
  });
});

describe('Breaker with more tenants than it tracks', () => {
  it('tracks new tenants again once the earlier ones have gone idle, a bucket later', async () => {
    const target = breaker({ rollingCountTimeoutMs: 10_000 });
    // 1,000 tenants fill what one breaker tracks.
    for (let i = 0; i < 1_000; i++) await target.fire(async () => 'ok', `t${i}`);
    await target.fire(async () => 'ok', 'charlie');
    // Past the window, they are idle: the next new tenant is tracked, and can be blamed.
    await advanceClocks(clock, 10_000);
    for (let i = 0; i < 3; i++) await target.fire(async () => 'ok', 'charlie');
    for (let i = 0; i < 4; i++) {
      await target.fire(() => Promise.reject(transient()), 'alpha').catch(() => undefined);
    }

    expect(target.state).toBe('closed');
    expect(target.refusal('alpha')?.kind).toBe('circuit_open');
  });
});
