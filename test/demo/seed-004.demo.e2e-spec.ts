import { runSeed004Demo } from '../../src/demo/seed-004.demo';

describe('npm run demo, seed 004', () => {
  it('tells the LLM gateway story with real HTTP: a retry, a cache hit, an open breaker, a failover, a refusal, a stream and a hedge', async () => {
    const lines: string[] = [];

    const summary = await runSeed004Demo((line) => lines.push(line));

    expect(summary.retry).toEqual({
      status: 200,
      outcome: 'ok',
      servedBy: 'fake/primary-1',
      attempts: 2,
      cache: 'miss',
      answer: 'A bulkhead keeps one failing part from sinking the whole ship.',
      waitedRetryAfter: true,
    });
    expect(summary.cacheHit).toEqual({
      status: 200,
      outcome: 'ok',
      servedBy: 'cache',
      attempts: 0,
      cache: 'hit',
      costUsd: 0,
      sameAnswer: true,
      providerCalls: 0,
    });
    // Both attempts at the primary failed, the breaker opened on the second, the secondary served.
    expect(summary.breaker.whileFailing).toEqual([
      { status: 200, outcome: 'ok', servedBy: 'fake/secondary-1', attempts: 3, cache: 'miss' },
    ]);
    expect(summary.breaker.circuits).toMatchObject({ 'llm.chat.0': 'open', 'llm.chat.1': 'closed' });
    expect(summary.breaker.afterOpen).toEqual({
      status: 200,
      outcome: 'ok',
      servedBy: 'fake/secondary-1',
      attempts: 1,
      cache: 'miss',
    });
    expect(summary.breaker.primaryCallsAfterOpen).toBe(0);
    expect(summary.failover).toEqual({
      status: 200,
      outcome: 'ok',
      servedBy: 'fake/backup-1',
      attempts: 2,
      cache: 'miss',
      quotaCalls: 1,
    });
    // 20 input tokens at $1/M and 900 output tokens at $4/M; a third worst case (over $0.004) no longer fits $0.01.
    expect(summary.budget).toEqual({
      capUsd: 0.01,
      answered: [
        { status: 200, outcome: 'ok', servedBy: 'fake/meter-1', attempts: 1, cache: 'miss', costUsd: 0.00362 },
        { status: 200, outcome: 'ok', servedBy: 'fake/meter-1', attempts: 1, cache: 'miss', costUsd: 0.00362 },
      ],
      refused: { status: 402, outcome: 'budget_exceeded', servedBy: '', attempts: 0, cache: 'miss' },
      providerCalls: 0,
      spentUsd: 0.00724,
    });
    expect(lines.some((line) => line.includes('cache hit, $0.000000'))).toBe(true);
    // The stream failed over before its first byte: the client got one whole answer from the second target.
    expect(summary.streamed).toEqual({
      status: 200,
      servedBy: 'fake/stream-1',
      attempts: 2,
      contentChunks: 6,
      whole: true,
      text: 'Streams commit at their first content: until then a failure is retried unseen.',
    });
    // The hedge answered; the slow target's attempt was cancelled as the loser of the race.
    expect(summary.hedged).toEqual({
      status: 200,
      outcome: 'ok',
      servedBy: 'fake/fast-1',
      attempts: 2,
      cache: 'bypass',
      hedged: true,
      answer: 'The hedge answers first.',
      fasterThanSlowTarget: true,
      slowOutcome: 'hedge_lost',
    });
    expect(lines.some((line) => line.includes('expensive question 3 -> 402 budget_exceeded'))).toBe(true);
  });
});
