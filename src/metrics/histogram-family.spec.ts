import { Histogram, Registry } from 'prom-client';
import { HistogramFamily } from './histogram-family';

describe('HistogramFamily', () => {
  const bounds = [0.01, 0.1, 1];

  it("renders exactly the exposition of prom-client's own Histogram for the same observations", async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const family = new HistogramFamily('x_seconds', 'help text', bounds);
    family.register(ours);
    const reference = new Histogram({
      name: 'x_seconds',
      help: 'help text',
      labelNames: ['tool', 'outcome'],
      buckets: bounds,
      registers: [theirs],
    });
    const ok = family.add({ tool: 'echo', outcome: 'ok' });
    const failed = family.add({ tool: 'echo', outcome: 'timeout' });

    for (const value of [0, 0.01, 0.05, 0.1, 0.5, 1, 3]) {
      ok.observe(value);
      reference.observe({ tool: 'echo', outcome: 'ok' }, value);
    }
    failed.observe(30);
    reference.observe({ tool: 'echo', outcome: 'timeout' }, 30);

    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it('counts a value equal to a bound in that bound', () => {
    const series = new HistogramFamily('y', 'h', bounds).add({});

    series.observe(0.1);

    expect([...series.buckets]).toEqual([0, 1, 0, 0]);
    expect(series.count).toBe(1);
    expect(series.sum).toBe(0.1);
  });
});
