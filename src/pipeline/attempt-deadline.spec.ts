import { LazyAbortController, ResilienceError } from '../common';
import { deferred } from '../common/deferred';
import { FakeClock, settle } from '../common/fake-clock';
import { AttemptDeadline } from './attempt-deadline';

describe('AttemptDeadline: an attempt raced against its deadline and its call', () => {
  function race(timeoutMs = 100) {
    const clock = new FakeClock();
    const work = deferred<string>();
    const attempt = new LazyAbortController();
    const call = new LazyAbortController();
    const deadline = new AttemptDeadline(
      clock,
      work.promise,
      timeoutMs,
      () => new ResilienceError('timeout', `did not answer within ${timeoutMs} ms`),
      (error) => new ResilienceError('internal', `failed: ${String(error)}`),
      attempt,
      call,
    );
    const heard: string[] = [];
    deadline.outcome.then(
      (value) => heard.push(`answer ${value}`),
      (error: ResilienceError) => heard.push(`${error.kind} (attempt aborted: ${attempt.aborted})`),
    );
    return { clock, work, attempt, call, deadline, heard };
  }

  it('answers what the work answered in time, and leaves no timer behind', async () => {
    const { clock, work, attempt, heard } = race();
    clock.advance(99);
    work.resolve('ok');
    await settle();
    expect(heard).toEqual(['answer ok']);
    expect(attempt.aborted).toBe(false);
    expect(clock.pendingTimers).toBe(0);
  });

  it('answers timeout at the deadline, after telling the work to stop, without waiting for it', async () => {
    const { clock, work, attempt, heard } = race(100);
    clock.advance(100);
    await settle();
    expect(heard).toEqual(['timeout (attempt aborted: true)']);
    expect((attempt.reason as ResilienceError).kind).toBe('timeout');
    // The work answering late changes nothing.
    work.resolve('late');
    await settle();
    expect(heard).toHaveLength(1);
  });

  it("answers the call's stop reason when the call is stopped, and drops the timer", async () => {
    const { clock, call, attempt, heard } = race();
    call.abort(new ResilienceError('stopped', 'the client left'));
    await settle();
    expect(heard).toEqual(['stopped (attempt aborted: true)']);
    expect(attempt.aborted).toBe(true);
    expect(clock.pendingTimers).toBe(0);
  });

  it('names a failure of the work as the caller says', async () => {
    const { work, attempt, heard } = race();
    work.reject(new Error('boom'));
    await settle();
    expect(heard).toEqual(['internal (attempt aborted: false)']);
    expect(attempt.aborted).toBe(false);
  });

  it('stop ends a pending attempt with the reason; after an answer it only aborts the work', async () => {
    const pending = race();
    pending.deadline.stop(new ResilienceError('stopped', 'a hedge won'));
    await settle();
    expect(pending.heard).toEqual(['stopped (attempt aborted: true)']);

    const answered = race();
    answered.work.resolve('ok');
    await settle();
    answered.deadline.stop(new ResilienceError('stopped', 'a hedge won'));
    await settle();
    expect(answered.heard).toEqual(['answer ok']);
    expect(answered.attempt.aborted).toBe(true);
  });

  it('no longer listens to the call once decided', async () => {
    const { work, call, attempt, heard } = race();
    work.resolve('ok');
    await settle();
    call.abort(new ResilienceError('stopped', 'shutdown'));
    await settle();
    expect(heard).toEqual(['answer ok']);
    expect(attempt.aborted).toBe(false);
  });
});
