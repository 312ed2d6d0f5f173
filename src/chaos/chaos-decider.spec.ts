import { seededRandom } from '../common';
import { ChaosDecider, type ChaosSettings } from './chaos-decider';

const DRAWS = 20_000;

/** The share of `DRAWS` decisions that were delayed, and the share that failed. */
function shares(settings: ChaosSettings<'transient'>, seed = 7): { delayed: number; failed: number } {
  const decider = new ChaosDecider(settings, seededRandom(seed));
  let delayed = 0;
  let failed = 0;
  for (let n = 0; n < DRAWS; n++) {
    const decision = decider.decide();
    if (decision.latencyMs > 0) delayed++;
    if (decision.fault !== undefined) failed++;
  }
  return { delayed: delayed / DRAWS, failed: failed / DRAWS };
}

describe('ChaosDecider', () => {
  it.each([0.01, 0.1, 0.25, 0.5, 0.9])('fails a share of %p of the attempts', (faultRate) => {
    const { failed, delayed } = shares({ faultRate, faultKind: 'transient' });

    // 20 000 draws: the standard error is at most 0.0035, so 0.015 is over four of them.
    expect(Math.abs(failed - faultRate)).toBeLessThan(0.015);
    expect(delayed).toBe(0);
  });

  it.each([0.05, 0.3, 0.75])('delays a share of %p of the attempts by latencyMs', (latencyRate) => {
    const { delayed, failed } = shares({ latencyRate, latencyMs: 250 });

    expect(Math.abs(delayed - latencyRate)).toBeLessThan(0.015);
    expect(failed).toBe(0);
  });

  it('draws latency and fault independently: both come together at the product of the rates', () => {
    const decider = new ChaosDecider(
      { faultRate: 0.5, faultKind: 'transient', latencyRate: 0.4, latencyMs: 100 },
      seededRandom(3),
    );
    let both = 0;
    for (let n = 0; n < DRAWS; n++) {
      const decision = decider.decide();
      if (decision.latencyMs === 100 && decision.fault === 'transient') both++;
    }

    expect(Math.abs(both / DRAWS - 0.2)).toBeLessThan(0.015);
  });

  it('names the configured fault and latency in each decision', () => {
    const decider = new ChaosDecider(
      { faultRate: 1, faultKind: 'timeout', latencyRate: 1, latencyMs: 1_500 },
      () => 0.5,
    );

    expect(decider.decide()).toEqual({ latencyMs: 1_500, fault: 'timeout' });
  });

  it('never injects at rates of 0, and draws nothing from the random source for them', () => {
    const random = jest.fn(() => 0);
    const decider = new ChaosDecider({ faultRate: 0, faultKind: 'transient', latencyRate: 0, latencyMs: 10 }, random);

    for (let n = 0; n < 100; n++) expect(decider.decide()).toEqual({ latencyMs: 0, fault: undefined });
    expect(random).not.toHaveBeenCalled();
    expect(decider.active).toBe(false);
  });

  it('always injects at rates of 1, and draws nothing for them either (retry jitter keeps its sequence)', () => {
    const random = jest.fn(() => 0.999_999);
    const decider = new ChaosDecider({ faultRate: 1, faultKind: 'transient', latencyRate: 1, latencyMs: 10 }, random);

    for (let n = 0; n < 100; n++) expect(decider.decide()).toEqual({ latencyMs: 10, fault: 'transient' });
    expect(random).not.toHaveBeenCalled();
  });

  it('draws once per rate strictly between 0 and 1: below the rate injects, at or above it does not', () => {
    const draws = [0.29, 0.3, 0.31];
    const decider = new ChaosDecider({ faultRate: 0.3, faultKind: 'transient' }, () => draws.shift()!);

    expect([decider.decide().fault, decider.decide().fault, decider.decide().fault]).toEqual([
      'transient',
      undefined,
      undefined,
    ]);
    expect(draws).toEqual([]);
  });

  it('is inactive with no settings at all', () => {
    expect(new ChaosDecider({}, seededRandom(1)).active).toBe(false);
  });

  it.each<[ChaosSettings<'transient'>, string]>([
    [{ faultRate: 1.5, faultKind: 'transient' }, 'faultRate must be a number from 0 to 1'],
    [{ faultRate: -0.1, faultKind: 'transient' }, 'faultRate must be a number from 0 to 1'],
    [{ faultRate: Number.NaN, faultKind: 'transient' }, 'faultRate must be a number from 0 to 1'],
    [{ latencyRate: 2, latencyMs: 1 }, 'latencyRate must be a number from 0 to 1'],
    [{ latencyRate: 0.5, latencyMs: 1.5 }, 'latencyMs must be an integer of at least 0'],
    [{ faultRate: 0.5 }, 'faultKind is required when faultRate is above 0'],
    [{ latencyRate: 0.5 }, 'latencyMs must be above 0 when latencyRate is above 0'],
  ])('refuses impossible settings %p', (settings, message) => {
    expect(() => new ChaosDecider(settings, seededRandom(1))).toThrow(new RangeError(message));
  });
});
