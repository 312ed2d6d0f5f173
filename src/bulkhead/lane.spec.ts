import { LazyAbortController, ResilienceError } from '../common';
import { FakeClock, settle } from '../common/fake-clock';
import { deferred, track } from '../../test/support/deferred';
import { Lane } from './lane';
import type { LaneOptions } from './lane.types';

function lane(
  options: Partial<LaneOptions> & Pick<LaneOptions, 'concurrency' | 'queueCapacity'>,
  clock = new FakeClock(),
) {
  return new Lane({ name: 'test', clock, ...options });
}

/** `lane.run` for tests that know the call is admitted. */
function admitted<T>(outcome: Promise<T> | string): Promise<T> {
  if (typeof outcome === 'string') throw new Error(`expected admission, got ${outcome}`);
  return outcome;
}

describe('Lane', () => {
  describe('the seed-000 scenario', () => {
    it('keeps a full render lane from consuming the notes lane, and expires a waiting call at its deadline', async () => {
      const clock = new FakeClock();
      const render = new Lane({ name: 'render', concurrency: 1, queueCapacity: 2, clock });
      const notes = new Lane({ name: 'notes', concurrency: 1, queueCapacity: 1, clock });
      const invocations: string[] = [];
      const release = deferred();
      const renderPreview = (callId: string) => async () => {
        invocations.push(callId);
        if (callId === 'render-1') await release.promise;
        return 'preview';
      };

      const first = track(admitted(render.run(renderPreview('render-1'))));
      const expiring = track(admitted(render.run(renderPreview('render-2'), { queueTtlMs: 1000 })));
      const third = track(admitted(render.run(renderPreview('render-3'))));
      const fourth = render.run(renderPreview('render-4'));
      const notesOutcome = await admitted(notes.run(async () => 'notes'));

      expect(fourth).toBe('queue_full');
      expect(notesOutcome).toBe('notes');
      expect(render.snapshot()).toEqual({
        active: 1,
        waiting: 2,
        waitingByClass: { critical: 0, standard: 2, sheddable: 0 },
        concurrency: 1,
        queueCapacity: 2,
        peakActive: 1,
      });

      clock.advance(999);
      await settle();
      expect(expiring.state).toBe('pending');
      clock.advance(1);
      await settle();
      expect(expiring.state).toBe('rejected');
      expect((expiring.reason as ResilienceError).kind).toBe('queue_expired');
      expect(render.snapshot().waiting).toBe(1);

      release.resolve();
      await settle();
      await settle();
      expect([first.state, third.state]).toEqual(['fulfilled', 'fulfilled']);
      expect(invocations).toEqual(['render-1', 'render-3']);
      expect(render.snapshot()).toMatchObject({ active: 0, waiting: 0 });
    });
  });

  describe('capacities', () => {
    it.each([
      [0, 1],
      [-1, 1],
      [true, 1],
      [1.5, 1],
      [Number.NaN, 1],
      [1, -1],
      [1, 1.5],
      [1, true],
      [Number.POSITIVE_INFINITY, 1],
    ])('refuses concurrency %p with queueCapacity %p', (concurrency, queueCapacity) => {
      expect(() => lane({ concurrency: concurrency as number, queueCapacity: queueCapacity as number })).toThrow(
        RangeError,
      );
    });

    it.each([0, -5, Number.POSITIVE_INFINITY, Number.NaN])('refuses a lane queue TTL of %p', (queueTtlMs) => {
      expect(() => lane({ concurrency: 1, queueCapacity: 1, queueTtlMs })).toThrow(RangeError);
    });

    it('treats queueCapacity 0 as zero-wait: start now or refuse', async () => {
      const subject = lane({ concurrency: 1, queueCapacity: 0 });
      const gate = deferred();
      const running = admitted(subject.run(() => gate.promise));
      expect(subject.run(async () => 'never')).toBe('queue_full');
      gate.resolve();
      await running;
      await settle();
      await expect(admitted(subject.run(async () => 'now'))).resolves.toBe('now');
    });
  });

  describe('admission', () => {
    it('refuses with a plain string and sets no timer when the queue is full', () => {
      const clock = new FakeClock();
      const subject = lane({ concurrency: 1, queueCapacity: 1 }, clock);
      admitted(subject.run(() => new Promise(() => {})));
      admitted(subject.run(() => 'queued'));
      const timersBefore = clock.pendingTimers;
      for (let i = 0; i < 1000; i++) expect(subject.run(() => 'refused')).toBe('queue_full');
      expect(clock.pendingTimers).toBe(timersBefore);
      expect(subject.stats().queueFull).toBe(1000);
      expect(subject.snapshot()).toMatchObject({ active: 1, waiting: 1 });
    });

    it('refuses an invalid per-call queue TTL and queues nothing', () => {
      const subject = lane({ concurrency: 1, queueCapacity: 2 });
      admitted(subject.run(() => new Promise(() => {})));
      for (const queueTtlMs of [0, -1, Number.POSITIVE_INFINITY, Number.NaN]) {
        expect(() => subject.run(() => 'x', { queueTtlMs })).toThrow(RangeError);
      }
      expect(subject.snapshot().waiting).toBe(0);
    });

    it('does not admit a call whose caller already aborted', async () => {
      const subject = lane({ concurrency: 1, queueCapacity: 1 });
      const abort = new LazyAbortController();
      abort.abort(new Error('gone'));
      const task = jest.fn();
      await expect(admitted(subject.run(task, { abort }))).rejects.toThrow('gone');
      expect(task).not.toHaveBeenCalled();
      expect(subject.snapshot()).toMatchObject({ active: 0, waiting: 0 });
    });

    it('records the highest concurrency ever reached', async () => {
      const subject = lane({ concurrency: 3, queueCapacity: 3 });
      const gates = [deferred(), deferred()];
      const calls = gates.map((gate) => admitted(subject.run(() => gate.promise)));
      gates.forEach((gate) => gate.resolve());
      await Promise.all(calls);
      await settle();
      expect(subject.snapshot()).toMatchObject({ active: 0, peakActive: 2 });
    });
  });

  describe('waiting calls', () => {
    it('expires a waiting call exactly at its deadline and never runs its task', async () => {
      const clock = new FakeClock();
      const subject = lane({ concurrency: 1, queueCapacity: 1, queueTtlMs: 500 }, clock);
      const gate = deferred();
      const first = admitted(subject.run(() => gate.promise));
      const task = jest.fn();
      const waiting = track(admitted(subject.run(task)));

      clock.advance(499);
      await settle();
      expect(waiting.state).toBe('pending');
      expect(subject.snapshot().waiting).toBe(1);
      clock.advance(1);
      await settle();
      expect(waiting.state).toBe('rejected');
      expect(waiting.reason).toMatchObject({ kind: 'queue_expired' });
      // The slot it held in the queue is free at once, while the first call still runs.
      expect(subject.snapshot()).toMatchObject({ active: 1, waiting: 0 });

      gate.resolve();
      await first;
      await settle();
      expect(task).not.toHaveBeenCalled();
      expect(subject.stats().expired).toBe(1);
    });

    it('expires calls of different TTLs each at its own deadline, with one timer for the whole lane', async () => {
      const clock = new FakeClock();
      const subject = lane({ concurrency: 1, queueCapacity: 10, queueTtlMs: 1_000 }, clock);
      const gate = deferred();
      const first = admitted(subject.run(() => gate.promise));
      const long = track(admitted(subject.run(jest.fn())));
      clock.advance(100);
      const short = track(admitted(subject.run(jest.fn(), { queueTtlMs: 200 })));
      const shortAgain = track(admitted(subject.run(jest.fn(), { queueTtlMs: 200 })));
      expect(clock.pendingTimers).toBe(1);

      clock.advance(199);
      await settle();
      expect([long.state, short.state, shortAgain.state]).toEqual(['pending', 'pending', 'pending']);
      clock.advance(1);
      await settle();
      expect([long.state, short.state, shortAgain.state]).toEqual(['pending', 'rejected', 'rejected']);
      expect(clock.pendingTimers).toBe(1);

      clock.advance(699);
      await settle();
      expect(long.state).toBe('pending');
      clock.advance(1);
      await settle();
      expect(long.state).toBe('rejected');
      expect(clock.pendingTimers).toBe(0);
      expect(subject.stats().expired).toBe(3);

      gate.resolve();
      await first;
    });

    it('keeps no timer once nothing waits: the last waiting call starting clears it', async () => {
      const clock = new FakeClock();
      const subject = lane({ concurrency: 1, queueCapacity: 2, queueTtlMs: 1_000 }, clock);
      const gate = deferred();
      const first = admitted(subject.run(() => gate.promise));
      const second = admitted(subject.run(async () => 'second'));
      expect(clock.pendingTimers).toBe(1);

      gate.resolve();
      await first;
      await expect(second).resolves.toBe('second');
      expect(clock.pendingTimers).toBe(0);
    });

    it('moves its timer sooner for a call with a shorter TTL, and keeps it for the next deadline after a stale one', async () => {
      const clock = new FakeClock();
      const subject = lane({ concurrency: 1, queueCapacity: 3, queueTtlMs: 1_000 }, clock);
      const gate = deferred();
      const first = admitted(subject.run(() => gate.promise));
      const leaving = new LazyAbortController();
      const early = track(admitted(subject.run(jest.fn(), { abort: leaving, queueTtlMs: 100 })));
      const late = track(admitted(subject.run(jest.fn())));

      leaving.abort(new Error('gone'));
      clock.advance(100);
      await settle();
      expect(early.state).toBe('rejected');
      expect(late.state).toBe('pending');
      expect(clock.pendingTimers).toBe(1);

      clock.advance(900);
      await settle();
      expect(late.reason).toMatchObject({ kind: 'queue_expired' });

      gate.resolve();
      await first;
    });

    it('removes a waiting call the moment its caller aborts, and never runs its task', async () => {
      const clock = new FakeClock();
      const subject = lane({ concurrency: 1, queueCapacity: 1 }, clock);
      const gate = deferred();
      const first = admitted(subject.run(() => gate.promise));
      const abort = new LazyAbortController();
      const task = jest.fn();
      const cancelled = track(admitted(subject.run(task, { abort })));

      abort.abort(new Error('caller left'));
      expect(subject.snapshot().waiting).toBe(0);
      expect(clock.pendingTimers).toBe(0);
      // The freed queue slot takes another call at once.
      const next = admitted(subject.run(async () => 'next'));

      gate.resolve();
      await first;
      await expect(next).resolves.toBe('next');
      expect(cancelled.state).toBe('rejected');
      expect((cancelled.reason as Error).message).toBe('caller left');
      expect(task).not.toHaveBeenCalled();
      expect(subject.stats().cancelledQueued).toBe(1);
    });

    it('serves waiting calls round-robin across tenants', async () => {
      const subject = lane({ concurrency: 1, queueCapacity: 10 });
      const gate = deferred();
      const started: string[] = [];
      const first = admitted(subject.run(() => gate.promise, { tenant: 'a' }));
      const calls = ['a1', 'a2', 'a3', 'b1', 'b2', 'c1'].map((id) =>
        admitted(subject.run(async () => void started.push(id), { tenant: id[0] })),
      );
      gate.resolve();
      await first;
      await Promise.all(calls);
      expect(started).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
    });

    it('caps the waiting calls of one tenant without blocking others', () => {
      const subject = lane({ concurrency: 1, queueCapacity: 4, maxQueuedPerTenant: 2 });
      admitted(subject.run(() => new Promise(() => {}), { tenant: 'noisy' }));
      admitted(subject.run(() => 'x', { tenant: 'noisy' }));
      admitted(subject.run(() => 'x', { tenant: 'noisy' }));
      expect(subject.run(() => 'x', { tenant: 'noisy' })).toBe('tenant_queue_full');
      expect(typeof subject.run(() => 'x', { tenant: 'quiet' })).toBe('object');
      expect(subject.stats().tenantQueueFull).toBe(1);
    });
  });

  describe('running calls', () => {
    it('keeps the slot of a running call whose caller aborted until its task settles', async () => {
      const clock = new FakeClock();
      const slow = new Lane({ name: 'slow', concurrency: 1, queueCapacity: 1, clock });
      const other = new Lane({ name: 'other', concurrency: 1, queueCapacity: 1, clock });
      const abort = new LazyAbortController();
      const finished = deferred();
      let sawAbort = false;
      const running = track(
        admitted(
          slow.run(
            async () => {
              abort.signal.addEventListener('abort', () => (sawAbort = true));
              await finished.promise;
              return 'done anyway';
            },
            { abort },
          ),
        ),
      );
      const queued = jest.fn(async () => 'queued ran');
      const waiting = admitted(slow.run(queued));

      abort.abort(new Error('caller left'));
      await settle();
      expect(sawAbort).toBe(true);
      expect(slow.snapshot()).toMatchObject({ active: 1, waiting: 1 });
      expect(queued).not.toHaveBeenCalled();
      await expect(admitted(other.run(async () => 'other lane'))).resolves.toBe('other lane');

      finished.resolve();
      await expect(waiting).resolves.toBe('queued ran');
      expect(running.state).toBe('fulfilled');
      expect(slow.stats().cancelledRunning).toBe(1);
    });

    it('answers a failing task with its own error and keeps serving', async () => {
      const subject = lane({ concurrency: 1, queueCapacity: 1 });
      await expect(
        admitted(
          subject.run(() => {
            throw new Error('sync failure');
          }),
        ),
      ).rejects.toThrow('sync failure');
      await expect(admitted(subject.run(async () => Promise.reject(new Error('async failure'))))).rejects.toThrow(
        'async failure',
      );
      await settle();
      await expect(admitted(subject.run(async () => 'still serving'))).resolves.toBe('still serving');
      expect(subject.snapshot()).toMatchObject({ active: 0, waiting: 0 });
    });
  });

  describe('shutdown', () => {
    it('refuses new calls once closed and lets accepted ones finish', async () => {
      const subject = lane({ concurrency: 1, queueCapacity: 1 });
      const gate = deferred();
      const running = admitted(subject.run(() => gate.promise.then(() => 'ran')));
      const waiting = admitted(subject.run(async () => 'waited'));
      subject.close();
      expect(subject.run(async () => 'late')).toBe('stopped');
      const idle = track(subject.whenIdle());
      await settle();
      expect(idle.state).toBe('pending');
      gate.resolve();
      await expect(running).resolves.toBe('ran');
      await expect(waiting).resolves.toBe('waited');
      await settle();
      expect(idle.state).toBe('fulfilled');
      expect(subject.stats().stopped).toBe(1);
    });

    it('stopNow answers waiting and running calls at once and aborts the running work', async () => {
      const clock = new FakeClock();
      const subject = lane({ concurrency: 1, queueCapacity: 1 }, clock);
      const abort = new LazyAbortController();
      const cleanup = deferred();
      const running = track(
        admitted(
          subject.run(
            () =>
              new Promise((_, reject) => {
                abort.onAbort((reason) => cleanup.promise.then(() => reject(reason)));
              }),
            { abort },
          ),
        ),
      );
      const task = jest.fn();
      const waiting = track(admitted(subject.run(task)));
      const stopped = new ResilienceError('stopped', 'shutting down');

      subject.stopNow(stopped);
      await settle();
      expect(running).toMatchObject({ state: 'rejected', reason: stopped });
      expect(waiting).toMatchObject({ state: 'rejected', reason: stopped });
      expect(abort.aborted).toBe(true);
      expect(clock.pendingTimers).toBe(0);
      // The handler has not finished its clean-up, so its slot is still taken.
      expect(subject.snapshot()).toMatchObject({ active: 1, waiting: 0 });
      expect(subject.run(async () => 'late')).toBe('stopped');

      cleanup.resolve();
      await subject.whenIdle();
      expect(subject.snapshot()).toMatchObject({ active: 0, waiting: 0 });
      expect(task).not.toHaveBeenCalled();
      expect(subject.stats().cancelledRunning).toBe(0);
    });
  });

  it('reports the queue wait of every call that starts', async () => {
    const clock = new FakeClock();
    const subject = lane({ concurrency: 1, queueCapacity: 1 }, clock);
    const waits: number[] = [];
    subject.onQueueWait((waitMs) => waits.push(waitMs));
    const gate = deferred();
    const first = admitted(subject.run(() => gate.promise));
    const second = admitted(subject.run(async () => 'second'));
    clock.advance(250);
    gate.resolve();
    await first;
    await second;
    expect(waits).toEqual([0, 250]);
    expect(subject.retryAfterMs()).toBe(1000);
  });
});
