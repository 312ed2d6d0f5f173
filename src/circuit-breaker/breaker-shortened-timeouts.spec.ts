import { deferred, ResilienceError } from '../common';
import { advanceClocks } from '../../test/support/fake-timers';
import { breakersInVirtualTime, fail, outcomeOf, transient } from '../../test/support/breaker-attempts';
import type { Breaker } from './breaker';

// A timeout its caller chose (X-Timeout-Ms below the tool's timeoutMs) is the caller's outcome:
// it counts nowhere, and such a call is never a half-open probe (issue 36).

const virtual = breakersInVirtualTime({
  errorThresholdPercentage: 50,
  volumeThreshold: 4,
  resetTimeoutMs: 5_000,
  rollingCountTimeoutMs: 10_000,
});

const SHORTENED = { timeoutShortened: true };
const timeout = () => new ResilienceError('timeout', "tool 'search' did not finish within 1 ms");

/** One attempt of `tenant` that times out on the timeout its caller shortened. */
const timedOutShort = (target: Breaker, tenant?: string) =>
  outcomeOf(target.fire(() => Promise.reject(timeout()), tenant, SHORTENED));

async function halfOpened(): Promise<Breaker> {
  const target = virtual.breaker();
  for (let i = 0; i < 4; i++) await fail(target);
  advanceClocks(virtual.clock, 5_000);
  expect(target.state).toBe('half_open');
  return target;
}

describe('a timeout its caller chose', () => {
  it('counts nowhere: eleven 1 ms calls of one tenant leave a healthy breaker closed for the others', async () => {
    const target = virtual.breaker();

    for (let i = 0; i < 11; i++) expect(await timedOutShort(target, 'alpha')).toMatchObject({ kind: 'timeout' });

    expect(target.snapshot()).toEqual({ state: 'closed', failures: 0, successes: 0, tenantsOpen: [] });
    expect(target.refusal('bravo')).toBeUndefined();
    expect(target.refusal('alpha')).toBeUndefined();
  });

  it('counts nowhere without a tenant either', async () => {
    const target = virtual.breaker();

    for (let i = 0; i < 11; i++) await timedOutShort(target);

    expect(target.snapshot()).toMatchObject({ state: 'closed', failures: 0, successes: 0 });
  });

  it('still counts the shortened call’s other failures: a 503 is the dependency’s whatever the timeout', async () => {
    const target = virtual.breaker();

    for (let i = 0; i < 4; i++) await outcomeOf(target.fire(() => Promise.reject(transient()), 'alpha', SHORTENED));

    expect(target.state).toBe('open');
  });

  it('still counts the timeout of a call with the tool’s own timeout', async () => {
    const target = virtual.breaker();

    for (let i = 0; i < 4; i++) await fail(target, timeout(), 'alpha');

    expect(target.state).toBe('open');
  });

  it('cannot be the half-open probe: refused with a Retry-After of one second, and a full-timeout call probes', async () => {
    const target = await halfOpened();
    const action = jest.fn(() => Promise.reject(timeout()));

    const refused = await outcomeOf(target.fire(action, 'alpha', SHORTENED));

    expect(action).not.toHaveBeenCalled();
    expect(refused).toMatchObject({ kind: 'circuit_open', retryAfterMs: 1_000 });
    expect((refused as ResilienceError).message).toContain('shortened timeout');
    expect(target.refusal('alpha', true)).toMatchObject({ kind: 'circuit_open' });
    expect(target.state).toBe('half_open');
    // The probe slot is still free for a call with the full timeout, which decides.
    expect(target.refusal('alpha')).toBeUndefined();
    await expect(target.fire(async () => 'ok', 'alpha')).resolves.toBe('ok');
    expect(target.state).toBe('closed');
    await expect(target.fire(async () => 'ok', 'alpha', SHORTENED)).resolves.toBe('ok');
  });

  it('is refused only as the probe: while the full-timeout probe is out, it waits like any call', async () => {
    const target = await halfOpened();
    const probe = deferred<string>();
    const fired = target.fire(() => probe.promise, 'bravo');

    expect(target.refusal('alpha', true)?.message).toContain('probe is in flight');
    probe.resolve('ok');
    await fired;
    expect(target.refusal('alpha', true)).toBeUndefined();
  });

  it('ending while half open (it started before) neither reopens nor closes the circuit', async () => {
    const target = virtual.breaker();
    const late = deferred<string>();
    const started = outcomeOf(target.fire(() => late.promise, 'alpha', SHORTENED));
    for (let i = 0; i < 4; i++) await fail(target);
    advanceClocks(virtual.clock, 5_000);
    expect(target.state).toBe('half_open');

    late.reject(timeout() as unknown as Error);
    await started;

    expect(target.state).toBe('half_open');
    expect(target.refusal()).toBeUndefined();
  });

  it('cannot be a refused tenant’s own probe either', async () => {
    const target = virtual.breaker();
    await outcomeOf(target.fire(async () => 'ok', 'bravo'));
    for (let i = 0; i < 4; i++) await fail(target, transient(), 'alpha');
    expect(target.refusal('alpha')?.message).toContain('for this tenant');
    advanceClocks(virtual.clock, 5_000);
    expect(target.refusal('alpha')).toBeUndefined();

    const shortAction = jest.fn(async () => 'ran');
    expect(await outcomeOf(target.fire(shortAction, 'alpha', SHORTENED))).toMatchObject({ kind: 'circuit_open' });
    expect(shortAction).not.toHaveBeenCalled();
    // Its probe slot is still free for a call with the full timeout, whose success serves it again.
    await expect(target.fire(async () => 'ok', 'alpha')).resolves.toBe('ok');
    expect(target.snapshot().tenantsOpen).toEqual([]);
  });
});
