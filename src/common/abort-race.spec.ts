import { raceWithAbort, rejectOnAbort } from './abort-race';
import { deferred } from './deferred';
import { LazyAbortController } from './lazy-abort-controller';

/** Lets every pending promise callback run. */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The same tests for both kinds of cancellation: each is made, aborted and inspected its own way. */
const sources = [
  {
    kind: 'AbortSignal',
    make: () => {
      const controller = new AbortController();
      return { abort: controller.signal, fire: (reason: unknown) => controller.abort(reason) };
    },
  },
  {
    kind: 'LazyAbortController',
    make: () => {
      const controller = new LazyAbortController();
      return { abort: controller, fire: (reason: unknown) => controller.abort(reason) };
    },
  },
];

describe.each(sources)('with a $kind', ({ make }) => {
  describe('rejectOnAbort', () => {
    it('rejects with the reason as it is once aborted, and stays pending before', async () => {
      const { abort, fire } = make();
      const reason = { why: 'client left' };
      const settled = jest.fn();
      const waiting = rejectOnAbort(abort);
      waiting.then(settled, settled);

      await flush();
      expect(settled).not.toHaveBeenCalled();
      fire(reason);

      await expect(waiting).rejects.toBe(reason);
    });

    it('rejects at once when already aborted', async () => {
      const { abort, fire } = make();
      fire('gone');

      await expect(rejectOnAbort(abort)).rejects.toBe('gone');
    });
  });

  describe('raceWithAbort', () => {
    it('answers with the promise when it settles first', async () => {
      const { abort } = make();
      const work = deferred<string>();
      const racing = raceWithAbort(work.promise, abort);

      work.resolve('Paris');

      await expect(racing).resolves.toBe('Paris');
    });

    it('fails with the promise’s own failure when it settles first', async () => {
      const { abort } = make();
      const failure = new Error('upstream answered 503');

      await expect(raceWithAbort(Promise.reject(failure), abort)).rejects.toBe(failure);
    });

    it('rejects with the reason as it is when aborted first, whatever the promise does later', async () => {
      const { abort, fire } = make();
      const work = deferred<string>();
      const reason = { why: 'client left' };
      const racing = raceWithAbort(work.promise, abort);

      fire(reason);
      work.reject(new Error('late'));

      await expect(racing).rejects.toBe(reason);
    });

    it('rejects at once when already aborted', async () => {
      const { abort, fire } = make();
      fire('gone');

      await expect(raceWithAbort(new Promise<never>(() => {}), abort)).rejects.toBe('gone');
    });
  });
});

describe('raceWithAbort', () => {
  it('stops listening to a signal once the promise settled', async () => {
    const controller = new AbortController();
    const removing = jest.spyOn(controller.signal, 'removeEventListener');

    await raceWithAbort(Promise.resolve('ok'), controller.signal);

    expect(removing).toHaveBeenCalledWith('abort', expect.any(Function));
  });

  it('stops listening to a LazyAbortController once the promise settled', async () => {
    const abort = new LazyAbortController();
    const listen = abort.onAbort.bind(abort);
    const removed = jest.fn();
    jest.spyOn(abort, 'onAbort').mockImplementation((listener) => {
      const remove = listen(listener);
      return () => {
        removed();
        remove();
      };
    });

    await raceWithAbort(Promise.resolve('ok'), abort);

    expect(removed).toHaveBeenCalledTimes(1);
  });
});

describe('a LazyAbortController', () => {
  it('is listened to without making its AbortSignal', async () => {
    const abort = new LazyAbortController();
    const signal = jest.spyOn(abort, 'signal', 'get');

    const racing = raceWithAbort(Promise.resolve('ok'), abort);
    const waiting = rejectOnAbort(abort);
    await racing;
    abort.abort('done');
    await expect(waiting).rejects.toBe('done');

    expect(signal).not.toHaveBeenCalled();
  });
});
