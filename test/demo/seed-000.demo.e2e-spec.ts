import { runSeed000Demo } from '../../src/demo/seed-000.demo';

describe('npm run demo', () => {
  it('tells the seed-000 story with real HTTP: one refused, notes served, one expired, the rest finished', async () => {
    const lines: string[] = [];

    const summary = await runSeed000Demo((line) => lines.push(line));

    expect(summary).toEqual({
      rejected: 'queue_full',
      notes: 'ok',
      beforeRelease: {
        render: {
          active: 1,
          waiting: 2,
          waitingByClass: { critical: 0, standard: 2, sheddable: 0 },
          concurrency: 1,
          queueCapacity: 2,
          peakActive: 1,
        },
        notes: {
          active: 0,
          waiting: 0,
          waitingByClass: { critical: 0, standard: 0, sheddable: 0 },
          concurrency: 1,
          queueCapacity: 1,
          peakActive: 1,
        },
      },
      renderOutcomes: ['ok', 'queue_expired', 'ok'],
      renderInvocations: ['render-1', 'render-3'],
    });
    expect(lines.some((line) => line.includes('render-4: 503 queue_full'))).toBe(true);
  });
});
