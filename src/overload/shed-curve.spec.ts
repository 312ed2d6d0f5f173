import { overloadLevel, refusalProbability } from './shed-curve';

describe('the shed curve', () => {
  it('rises with the pressure from recovery (0.8) to twice the threshold, and no further', () => {
    expect(overloadLevel(0.5)).toBe(0);
    expect(overloadLevel(0.8)).toBe(0);
    expect(overloadLevel(1)).toBeCloseTo(1 / 6);
    expect(overloadLevel(1.4)).toBeCloseTo(0.5);
    expect(overloadLevel(2)).toBe(1);
    expect(overloadLevel(5)).toBe(1);
  });

  it.each([
    [0, 0, 0, 0],
    [0.25, 0, 0, 0.5],
    [0.5, 0, 0, 1],
    [0.75, 0, 0.5, 1],
    [1, 0, 1, 1],
  ])('at level %d refuses critical %d, standard %d, sheddable %d', (level, critical, standard, sheddable) => {
    expect(refusalProbability(level, 0)).toBeCloseTo(critical);
    expect(refusalProbability(level, 1)).toBeCloseTo(standard);
    expect(refusalProbability(level, 2)).toBeCloseTo(sheddable);
  });

  it('never refuses a lower class less than a higher one', () => {
    for (let level = 0; level <= 1; level += 0.01) {
      expect(refusalProbability(level, 2)).toBeGreaterThanOrEqual(refusalProbability(level, 1));
      expect(refusalProbability(level, 1)).toBeGreaterThanOrEqual(refusalProbability(level, 0));
    }
  });
});
