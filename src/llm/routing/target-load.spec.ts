import { LATENCY_STALE_MS, TargetLoad } from './target-load';

describe('TargetLoad', () => {
  it('counts attempts in flight and never below zero', () => {
    const load = new TargetLoad();
    load.started();
    load.started();
    load.ended();
    expect(load.inFlight).toBe(1);
    load.ended();
    load.ended();
    expect(load.inFlight).toBe(0);
  });

  it('has no latency before its first sample', () => {
    expect(new TargetLoad().latencyMs('answer', 0)).toBeUndefined();
  });

  it('takes the first sample as it is, then moves 30 % of the way to each new one', () => {
    const load = new TargetLoad();
    load.sample('answer', 100, 1_000);
    expect(load.latencyMs('answer', 1_000)).toBe(100);
    load.sample('answer', 200, 2_000);
    expect(load.latencyMs('answer', 2_000)).toBeCloseTo(130);
  });

  it('keeps the time to first content and the whole answer apart', () => {
    const load = new TargetLoad();
    load.sample('first_token', 50, 0);
    load.sample('answer', 900, 0);
    expect(load.latencyMs('first_token', 0)).toBe(50);
    expect(load.latencyMs('answer', 0)).toBe(900);
  });

  it('forgets an average older than LATENCY_STALE_MS, and starts afresh from the next sample', () => {
    const load = new TargetLoad();
    load.sample('answer', 5_000, 0);
    expect(load.latencyMs('answer', LATENCY_STALE_MS)).toBe(5_000);
    expect(load.latencyMs('answer', LATENCY_STALE_MS + 1)).toBeUndefined();
    load.sample('answer', 100, LATENCY_STALE_MS + 1);
    expect(load.latencyMs('answer', LATENCY_STALE_MS + 1)).toBe(100);
  });

  it('records nothing untracked (a route whose strategy does not read it)', () => {
    const load = new TargetLoad(false);
    load.started();
    load.sample('answer', 100, 0);
    expect(load.inFlight).toBe(0);
    expect(load.latencyMs('answer', 0)).toBeUndefined();
  });
});
