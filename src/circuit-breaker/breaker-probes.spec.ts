import { deferred, type Deferred } from '../common';
import { advanceClocks } from '../../test/support/fake-timers';
import {
  breakersInVirtualTime,
  fail,
  outcomeOf,
  refusalOf,
  stopped,
  succeed,
  transient,
} from '../../test/support/breaker-attempts';
import { Breaker, type ProbeOutcome } from './breaker';
import type { BreakerSettings } from './breaker-settings';

// halfOpenProbes: N probes let through while half open, in virtual time.

const SETTINGS: BreakerSettings = {
  errorThresholdPercentage: 50,
  volumeThreshold: 2,
  resetTimeoutMs: 1_000,
  rollingCountTimeoutMs: 10_000,
  halfOpenProbes: 3,
};

const virtual = breakersInVirtualTime(SETTINGS);

/** A breaker half open, with how its half-open attempts came out. */
async function halfOpened(
  overrides: Partial<BreakerSettings> = {},
): Promise<{ target: Breaker; probes: ProbeOutcome[] }> {
  const target = virtual.breaker(overrides);
  await fail(target);
  await fail(target);
  advanceClocks(virtual.clock, target.settings.resetTimeoutMs);
  expect(target.state).toBe('half_open');
  const probes: ProbeOutcome[] = [];
  target.onProbe((outcome) => probes.push(outcome));
  return { target, probes };
}

/** A probe held out until its answer is given. */
function heldProbe(target: Breaker): { answer: Deferred<string>; ended: Promise<unknown> } {
  const answer = deferred<string>();
  return { answer, ended: outcomeOf(target.fire(() => answer.promise)) };
}

describe('Breaker with halfOpenProbes', () => {
  it('lets that many probes through at once and refuses the next with a Retry-After of one second', async () => {
    const { target } = await halfOpened();
    const held = [heldProbe(target), heldProbe(target), heldProbe(target)];

    const refusal = await refusalOf(target);
    expect(refusal.kind).toBe('circuit_open');
    expect(refusal.message).toContain('its 3 probes are in flight');
    expect(refusal.retryAfterMs).toBe(1_000);
    for (const probe of held) probe.answer.resolve('ok');
    await Promise.all(held.map((probe) => probe.ended));
  });

  it('closes only once every probe succeeded', async () => {
    const { target, probes } = await halfOpened();
    const held = [heldProbe(target), heldProbe(target), heldProbe(target)];

    held[0].answer.resolve('ok');
    held[1].answer.resolve('ok');
    await Promise.all([held[0].ended, held[1].ended]);
    expect(target.state).toBe('half_open');
    held[2].answer.resolve('ok');
    await held[2].ended;

    expect(target.state).toBe('closed');
    expect(probes).toEqual(['succeeded', 'succeeded', 'succeeded']);
  });

  it('lets probes through as they come: one out at a time closes it after the last', async () => {
    const { target } = await halfOpened();
    await succeed(target);
    await succeed(target);
    expect(target.state).toBe('half_open');
    await succeed(target);
    expect(target.state).toBe('closed');
  });

  it('opens again on the first failure, and the other probes’ late successes do not close it', async () => {
    const { target, probes } = await halfOpened();
    const held = [heldProbe(target), heldProbe(target)];
    await fail(target);
    expect(target.state).toBe('open');

    for (const probe of held) probe.answer.resolve('ok');
    await Promise.all(held.map((probe) => probe.ended));

    expect(target.state).toBe('open');
    expect(probes).toEqual(['failed']);
    expect((await refusalOf(target)).retryAfterMs).toBe(1_000);
  });

  it('gives a stopped probe’s slot back: the next call probes in its place', async () => {
    const { target, probes } = await halfOpened();
    const held = [heldProbe(target), heldProbe(target), heldProbe(target)];
    held[1].answer.reject(stopped());
    await held[1].ended;
    expect(target.state).toBe('half_open');
    expect(probes).toEqual(['stopped']);

    const next = heldProbe(target);
    await refusalOf(target);
    for (const probe of [held[0], held[2], next]) probe.answer.resolve('ok');
    await Promise.all([held[0], held[2], next].map((probe) => probe.ended));
    expect(target.state).toBe('closed');
  });

  it('frees no slot when an attempt older than the half-open period is stopped', async () => {
    const target = virtual.breaker();
    const older = heldProbe(target);
    await fail(target);
    await fail(target);
    advanceClocks(virtual.clock, 1_000);
    const held = [heldProbe(target), heldProbe(target), heldProbe(target)];

    older.answer.reject(stopped());
    await older.ended;

    await refusalOf(target);
    for (const probe of held) probe.answer.reject(transient());
    await Promise.all(held.map((probe) => probe.ended));
  });

  it('lets one probe through by default, as before', async () => {
    const { target } = await halfOpened({ halfOpenProbes: undefined });
    const held = heldProbe(target);
    expect((await refusalOf(target)).message).toContain('its one probe is in flight');
    held.answer.resolve('ok');
    await held.ended;
    expect(target.state).toBe('closed');
  });
});
