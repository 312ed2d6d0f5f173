import { AimdLimit } from './aimd-limit';

const settings = { algorithm: 'aimd', min: 2, max: 20 } as const;

describe('AimdLimit', () => {
  it('adds one slot per call that ends in time while the lane is well used, up to max', () => {
    const limit = new AimdLimit(settings, 10);
    limit.onSample(100, 10, false);
    expect(limit.limit).toBe(11);
    for (let i = 0; i < 50; i++) limit.onSample(100, limit.limit, false);
    expect(limit.limit).toBe(20);
  });

  it('does not grow while less than half the limit is in use', () => {
    const limit = new AimdLimit(settings, 10);
    limit.onSample(100, 4, false);
    expect(limit.limit).toBe(10);
  });

  it('cuts to backoffRatio of itself on a timeout, at least one less, never below min', () => {
    const limit = new AimdLimit(settings, 10);
    limit.onSample(100, 10, true);
    expect(limit.limit).toBe(9);
    const steep = new AimdLimit({ ...settings, backoffRatio: 0.5 }, 20);
    steep.onSample(100, 1, true);
    expect(steep.limit).toBe(10);
    for (let i = 0; i < 20; i++) steep.onSample(100, 1, true);
    expect(steep.limit).toBe(2);
  });

  it('counts a call slower than latencyThresholdMs as a timeout', () => {
    const limit = new AimdLimit({ ...settings, latencyThresholdMs: 1_000 }, 10);
    limit.onSample(1_000, 10, false);
    expect(limit.limit).toBe(11);
    limit.onSample(1_001, 10, false);
    expect(limit.limit).toBe(9);
  });
});
