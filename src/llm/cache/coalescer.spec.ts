import { type Deferred, deferred, track } from '../../../test/support/deferred';
import { Coalescer } from './coalescer';

/** Lets every pending promise callback run. */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A unit of work the test settles by hand, counting its runs and keeping each run's signal. */
function manualWork<T>() {
  const runs: Array<{ signal: AbortSignal; outcome: Deferred<T> }> = [];
  const work = (signal: AbortSignal) => {
    const outcome = deferred<T>();
    runs.push({ signal, outcome });
    return outcome.promise;
  };
  return { work, runs };
}

describe('Coalescer', () => {
  let coalescer: Coalescer<string>;

  beforeEach(() => {
    coalescer = new Coalescer<string>();
  });

  it('runs the work once for concurrent calls with one key, and answers each with its outcome', async () => {
    const { work, runs } = manualWork<string>();

    const calls = [
      coalescer.run('k', work).outcome,
      coalescer.run('k', work).outcome,
      coalescer.run('k', work).outcome,
    ];
    expect(runs).toHaveLength(1);
    expect(coalescer.waiters('k')).toBe(3);

    runs[0].outcome.resolve('Paris');

    await expect(Promise.all(calls)).resolves.toEqual(['Paris', 'Paris', 'Paris']);
  });

  it('runs the work once per key', async () => {
    const { work, runs } = manualWork<string>();

    const first = coalescer.run('a', work).outcome;
    const second = coalescer.run('b', work).outcome;
    expect(runs).toHaveLength(2);
    expect(coalescer.size).toBe(2);

    runs[0].outcome.resolve('for a');
    runs[1].outcome.resolve('for b');

    await expect(Promise.all([first, second])).resolves.toEqual(['for a', 'for b']);
  });

  it('answers every caller with the failure of the run', async () => {
    const { work, runs } = manualWork<string>();
    const calls = [coalescer.run('k', work).outcome, coalescer.run('k', work).outcome];
    const failure = new Error('upstream answered 503');

    runs[0].outcome.reject(failure);

    for (const call of calls) await expect(call).rejects.toBe(failure);
    expect(coalescer.size).toBe(0);
  });

  it('answers every caller with the failure of work that throws instead of rejecting', async () => {
    const failure = new Error('bad request');
    const work = () => {
      throw failure;
    };

    await expect(coalescer.run('k', work).outcome).rejects.toBe(failure);
    expect(coalescer.size).toBe(0);
  });

  it('forgets the key once the run settles: the next call runs the work again', async () => {
    const { work, runs } = manualWork<string>();
    const first = coalescer.run('k', work).outcome;
    runs[0].outcome.resolve('first');
    await first;

    expect(coalescer.size).toBe(0);
    expect(coalescer.waiters('k')).toBe(0);
    const second = coalescer.run('k', work).outcome;
    expect(runs).toHaveLength(2);
    runs[1].outcome.resolve('second');
    await expect(second).resolves.toBe('second');
  });

  it('has forgotten the key when a caller resumes: calling again from there starts a fresh run', async () => {
    const { work, runs } = manualWork<string>();
    let again: Promise<string> | undefined;
    const first = coalescer.run('k', work).outcome.then(() => {
      again = coalescer.run('k', work).outcome;
    });

    runs[0].outcome.resolve('first');
    await first;

    expect(runs).toHaveLength(2);
    runs[1].outcome.resolve('second');
    await expect(again).resolves.toBe('second');
  });

  describe('callers that leave', () => {
    it('answers a joining caller whose client leaves at once, and lets the run go on for the others', async () => {
      const { work, runs } = manualWork<string>();
      const leaving = new AbortController();
      const leader = coalescer.run('k', work).outcome;
      const follower = coalescer.run('k', work, { signal: leaving.signal }).outcome;
      const other = coalescer.run('k', work, { signal: new AbortController().signal }).outcome;

      leaving.abort(new Error('client closed the connection'));

      await expect(follower).rejects.toThrow('client closed the connection');
      expect(runs[0].signal.aborted).toBe(false);
      expect(coalescer.waiters('k')).toBe(2);
      runs[0].outcome.resolve('Paris');
      await expect(Promise.all([leader, other])).resolves.toEqual(['Paris', 'Paris']);
    });

    it('lets the run go on for the others when the first caller’s client leaves', async () => {
      const { work, runs } = manualWork<string>();
      const leaving = new AbortController();
      const leader = coalescer.run('k', work, { signal: leaving.signal }).outcome;
      const follower = coalescer.run('k', work, { signal: new AbortController().signal }).outcome;

      leaving.abort(new Error('client closed the connection'));

      await expect(leader).rejects.toThrow('client closed the connection');
      expect(runs[0].signal.aborted).toBe(false);
      expect(coalescer.waiters('k')).toBe(1);
      runs[0].outcome.resolve('Paris');
      await expect(follower).resolves.toBe('Paris');
    });

    it('aborts the run’s signal once every caller has left, and starts a newcomer afresh', async () => {
      const { work, runs } = manualWork<string>();
      const first = new AbortController();
      const second = new AbortController();
      const calls = [
        track(coalescer.run('k', work, { signal: first.signal }).outcome),
        track(coalescer.run('k', work, { signal: second.signal }).outcome),
      ];

      first.abort(new Error('first left'));
      expect(runs[0].signal.aborted).toBe(false);
      second.abort(new Error('second left'));

      expect(runs[0].signal.aborted).toBe(true);
      expect(runs[0].signal.reason).toEqual(new Error('second left'));
      expect(coalescer.size).toBe(0);
      const newcomer = coalescer.run('k', work).outcome;
      expect(runs).toHaveLength(2);
      // The abandoned run settling late neither answers the newcomer nor forgets its run.
      runs[0].outcome.reject(runs[0].signal.reason);
      await flush();
      expect(coalescer.waiters('k')).toBe(1);
      runs[1].outcome.resolve('fresh');
      await expect(newcomer).resolves.toBe('fresh');
      expect(calls.map((call) => call.state)).toEqual(['rejected', 'rejected']);
    });

    it('never aborts a run while a caller without a signal waits', async () => {
      const { work, runs } = manualWork<string>();
      const leaving = new AbortController();
      const staying = coalescer.run('k', work).outcome;
      const left = coalescer.run('k', work, { signal: leaving.signal }).outcome;

      leaving.abort(new Error('left'));

      await expect(left).rejects.toThrow('left');
      expect(runs[0].signal.aborted).toBe(false);
      runs[0].outcome.resolve('Paris');
      await expect(staying).resolves.toBe('Paris');
    });

    it('refuses a caller whose client has already left, starting and joining nothing', async () => {
      const { work, runs } = manualWork<string>();
      const gone = AbortSignal.abort(new Error('already gone'));

      const refused = coalescer.run('k', work, { signal: gone });
      expect(refused.started).toBe(false);
      await expect(refused.outcome).rejects.toThrow('already gone');
      expect(runs).toHaveLength(0);

      const running = coalescer.run('k', work).outcome;
      await expect(coalescer.run('k', work, { signal: gone }).outcome).rejects.toThrow('already gone');
      expect(coalescer.waiters('k')).toBe(1);
      runs[0].outcome.resolve('Paris');
      await running;
    });

    it('ignores a client that leaves after its answer', async () => {
      const { work, runs } = manualWork<string>();
      const late = new AbortController();
      const call = coalescer.run('k', work, { signal: late.signal }).outcome;
      runs[0].outcome.resolve('Paris');
      await expect(call).resolves.toBe('Paris');

      late.abort(new Error('left afterwards'));

      expect(runs[0].signal.aborted).toBe(false);
      expect(coalescer.size).toBe(0);
    });
  });

  it('tells each caller whether it started the run or joined one in flight', async () => {
    const { work, runs } = manualWork<string>();

    const first = coalescer.run('k', work);
    const second = coalescer.run('k', work, { signal: new AbortController().signal });
    expect([first.started, second.started]).toEqual([true, false]);

    runs[0].outcome.resolve('Paris');
    await Promise.all([first.outcome, second.outcome]);
    expect(coalescer.run('k', work).started).toBe(true);
    runs[1].outcome.resolve('again');
  });

  it('counts the callers waiting on a key, its first caller included', async () => {
    const { work, runs } = manualWork<string>();
    expect(coalescer.waiters('k')).toBe(0);

    const calls = [
      coalescer.run('k', work).outcome,
      coalescer.run('k', work, { signal: new AbortController().signal }).outcome,
    ];
    expect(coalescer.waiters('k')).toBe(2);
    expect(coalescer.waiters('other')).toBe(0);

    runs[0].outcome.resolve('Paris');
    await Promise.all(calls);
    expect(coalescer.waiters('k')).toBe(0);
  });

  it('gives each joining caller a copy of its own, when told how to copy', async () => {
    const objects = new Coalescer<{ text: string }>({ copy: structuredClone });
    const { work, runs } = manualWork<{ text: string }>();
    const calls = [objects.run('k', work).outcome, objects.run('k', work).outcome, objects.run('k', work).outcome];
    const answer = { text: 'Paris' };

    runs[0].outcome.resolve(answer);
    const [leader, ...followers] = await Promise.all(calls);

    expect(leader).toBe(answer);
    for (const follower of followers) {
      expect(follower).toEqual(answer);
      expect(follower).not.toBe(answer);
    }
    expect(followers[0]).not.toBe(followers[1]);
  });
});
