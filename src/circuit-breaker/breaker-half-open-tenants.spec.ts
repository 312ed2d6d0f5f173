import type { ResilienceError } from '../common';
import { advanceClocks } from '../../test/support/fake-timers';
import { breakersInVirtualTime, fail, outcomeOf, succeed, transient } from '../../test/support/breaker-attempts';
import type { Breaker } from './breaker';

// Half open, one tenant whose own calls fail cannot hold the shared breaker open for everyone
// (issue 36): the first tenant to fail while another waits is refused alone, and the next probe
// is another tenant's.

const RESET_MS = 1_000;
const virtual = breakersInVirtualTime({
  errorThresholdPercentage: 50,
  volumeThreshold: 4,
  resetTimeoutMs: RESET_MS,
  rollingCountTimeoutMs: 10_000,
});

const OUTAGE_MS = 500;
const RUN_MS = 6_000;

interface Traffic {
  /** What bravo got, call by call, with when it called. */
  bravo: Array<{ at: number; outcome: unknown }>;
  alphaServed: number;
}

/**
 * The reviewer's scenario in virtual time: every call fails during a 0.5 s outage for all; after
 * it, alpha's own calls keep failing (its arguments make the upstream answer 500), bravo's would
 * succeed. Alpha calls every 10 ms, bravo every 50 ms.
 */
async function run(target: Breaker): Promise<Traffic> {
  const traffic: Traffic = { bravo: [], alphaServed: 0 };
  const start = virtual.clock.now();
  for (let at = 0; at < RUN_MS; at += 10) {
    const outage = at < OUTAGE_MS;
    const alpha = await outcomeOf(target.fire(() => Promise.reject(transient()), 'alpha'));
    if (alpha === 'ok') traffic.alphaServed++;
    if (at % 50 === 0) {
      const bravo = await outcomeOf(
        target.fire(() => (outage ? Promise.reject(transient()) : Promise.resolve('ok')), 'bravo'),
      );
      traffic.bravo.push({ at, outcome: bravo });
    }
    advanceClocks(virtual.clock, 10);
  }
  expect(virtual.clock.now() - start).toBe(RUN_MS);
  return traffic;
}

describe('half open, with tenants', () => {
  it('serves a tenant whose calls succeed after an outage for all, and refuses alone the one whose own calls keep failing', async () => {
    const target = virtual.breaker();

    const traffic = await run(target);

    // Bravo is refused while the breaker is open after the outage, and served from the first
    // half-open period on: alpha's failed probe then is alpha's, and bravo's probe closes it.
    const afterRecovery = traffic.bravo.filter(({ at }) => at >= OUTAGE_MS + 2 * RESET_MS);
    expect(afterRecovery.length).toBeGreaterThan(60);
    expect(afterRecovery.every(({ outcome }) => outcome === 'ok')).toBe(true);
    const refused = traffic.bravo.filter(({ outcome }) => (outcome as ResilienceError).kind === 'circuit_open');
    expect(refused.length).toBeLessThanOrEqual((2 * RESET_MS) / 50);
    expect(target.state).toBe('closed');
    const alphaRefusal = target.refusal('alpha');
    expect(alphaRefusal?.kind).toBe('circuit_open');
    expect(alphaRefusal?.message).toContain('for this tenant');
    expect(target.refusal('bravo')).toBeUndefined();
    expect(traffic.alphaServed).toBe(0);
  });

  it('refuses the tenant whose probe failed alone, stays half open, and lets another tenant’s call probe', async () => {
    const target = virtual.breaker();
    for (let i = 0; i < 4; i++) await fail(target, transient(), i % 2 === 0 ? 'alpha' : 'bravo');
    expect(target.refusal('bravo')?.kind).toBe('circuit_open');
    advanceClocks(virtual.clock, RESET_MS);
    expect(target.state).toBe('half_open');

    expect(await fail(target, transient(), 'alpha')).toMatchObject({ kind: 'transient' });

    expect(target.state).toBe('half_open');
    expect(target.refusal('alpha')).toMatchObject({ kind: 'circuit_open', retryAfterMs: RESET_MS });
    expect(target.refusal('bravo')).toBeUndefined();
    expect(await succeed(target, 'bravo')).toBe('ok');
    expect(target.state).toBe('closed');
    expect(target.snapshot().tenantsOpen).toEqual([{ tenant: 'alpha', retryAfterMs: RESET_MS }]);
    // Alpha is served again once a probe of its own succeeds.
    advanceClocks(virtual.clock, RESET_MS);
    expect(await succeed(target, 'alpha')).toBe('ok');
    expect(target.snapshot().tenantsOpen).toEqual([]);
  });

  it('opens for everyone when a second tenant’s probe fails too, and serves the first again with the rest', async () => {
    const target = virtual.breaker({ backoffMultiplier: 2 });
    for (let i = 0; i < 4; i++) await fail(target, transient(), i % 2 === 0 ? 'alpha' : 'bravo');
    target.refusal('bravo');
    advanceClocks(virtual.clock, RESET_MS);

    await fail(target, transient(), 'alpha');
    await fail(target, transient(), 'bravo');

    expect(target.state).toBe('open');
    expect(target.snapshot().tenantsOpen).toEqual([]);
    expect(target.refusal('charlie')).toMatchObject({ kind: 'circuit_open', retryAfterMs: 2 * RESET_MS });
    // The dependency recovers: whoever probes next closes it for everyone, alpha included.
    advanceClocks(virtual.clock, 2 * RESET_MS);
    expect(await succeed(target, 'alpha')).toBe('ok');
    expect(target.state).toBe('closed');
  });

  it('opens for everyone when a tenant alone on the dependency fails its probe: nobody else waits', async () => {
    const target = virtual.breaker();
    for (let i = 0; i < 4; i++) await fail(target, transient(), 'alpha');
    expect(target.refusal('alpha')?.kind).toBe('circuit_open');
    advanceClocks(virtual.clock, RESET_MS);

    await fail(target, transient(), 'alpha');

    expect(target.state).toBe('open');
    expect(target.snapshot().tenantsOpen).toEqual([]);
  });

  it('opens for everyone when an attempt with no tenant fails its probe', async () => {
    const target = virtual.breaker();
    for (let i = 0; i < 4; i++) await fail(target, transient(), 'alpha');
    target.refusal('bravo');
    advanceClocks(virtual.clock, RESET_MS);

    await fail(target);

    expect(target.state).toBe('open');
  });
});
