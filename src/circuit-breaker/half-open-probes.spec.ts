import { HalfOpenProbes } from './half-open-probes';

describe('HalfOpenProbes', () => {
  it('takes slots until all are taken, and closes once as many succeeded', () => {
    const probes = new HalfOpenProbes(3);
    expect([probes.take({}), probes.take({}), probes.take({})]).toEqual([true, true, false]);
    expect([probes.success(), probes.success(), probes.success()]).toEqual([false, false, true]);
  });

  it('gives the slot of a stopped probe back, and knows no attempt it did not take', () => {
    const probes = new HalfOpenProbes(2);
    const first = {};
    probes.take(first);
    expect(probes.take({})).toBe(false);
    expect(probes.stopped({})).toBe(false);
    expect(probes.stopped(first)).toBe(true);
    expect(probes.stopped(first)).toBe(false);
    expect(probes.take({})).toBe(false);
  });

  it('starts afresh on reset: every slot free, no success counted', () => {
    const probes = new HalfOpenProbes(2);
    probes.take({});
    probes.success();
    probes.reset();
    expect(probes.take({})).toBe(true);
    expect(probes.success()).toBe(false);
  });

  it('with one slot, lets one probe through and closes on its success', () => {
    const probes = new HalfOpenProbes(1);
    expect(probes.take({})).toBe(false);
    expect(probes.success()).toBe(true);
  });
});
