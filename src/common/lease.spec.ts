import { deferred } from './deferred';
import { FakeClock, settle } from './fake-clock';
import { LEASE_MARGIN_MS, LeaseKeeper, type LeaseLoss, leaseLifetimeMs } from './lease';

describe('leaseLifetimeMs', () => {
  it('is the queue wait, the run and the margin', () => {
    expect(leaseLifetimeMs(2_000, 10_000)).toBe(12_000 + LEASE_MARGIN_MS);
  });
});

describe('LeaseKeeper', () => {
  it('renews for the whole lifetime every third of it while the work runs', () => {
    const clock = new FakeClock();
    const renewals: Array<[number, number]> = [];
    const keeper = new LeaseKeeper(
      clock,
      3_000,
      (ttlMs) => {
        renewals.push([clock.now(), ttlMs]);
        return true;
      },
      () => undefined,
    );
    clock.advance(10_000);
    expect(renewals).toEqual([
      [1_000, 3_000],
      [2_000, 3_000],
      [3_000, 3_000],
      [4_000, 3_000],
      [5_000, 3_000],
      [6_000, 3_000],
      [7_000, 3_000],
      [8_000, 3_000],
      [9_000, 3_000],
      [10_000, 3_000],
    ]);
    keeper.stop();
    clock.advance(10_000);
    expect(renewals).toHaveLength(10);
    expect(clock.pendingTimers).toBe(0);
  });

  it('reports a hold the store says is gone, once, and renews nothing after', () => {
    const clock = new FakeClock();
    const lost: LeaseLoss[] = [];
    let asked = 0;
    new LeaseKeeper(
      clock,
      3_000,
      () => {
        asked++;
        return asked < 3;
      },
      (loss) => lost.push(loss),
    );
    clock.advance(20_000);
    expect(asked).toBe(3);
    expect(lost).toEqual(['gone']);
    expect(clock.pendingTimers).toBe(0);
  });

  it('tries again after a renewal the store could not answer, and reports the hold lost only before it would lapse', async () => {
    const clock = new FakeClock();
    const lost: Array<[LeaseLoss, number]> = [];
    const answers = [true, false, false, false];
    new LeaseKeeper(
      clock,
      3_000,
      () => (answers.shift() ? Promise.resolve(true) : Promise.reject(new Error('store down'))),
      (loss) => lost.push([loss, clock.now()]),
    );
    // Kept at 1 s until 4 s; 2 s and 3 s fail; at 3 s the next turn (4 s) would come as it lapses.
    await clock.advanceAsync(2_000);
    expect(lost).toEqual([]);
    await clock.advanceAsync(1_000);
    expect(lost).toEqual([['unreachable', 3_000]]);
    await clock.advanceAsync(10_000);
    expect(lost).toHaveLength(1);
  });

  it('keeps a hold whose renewal failed once and then answered', async () => {
    const clock = new FakeClock();
    const lost: LeaseLoss[] = [];
    const answers = [false, true, false, true, false, true];
    new LeaseKeeper(
      clock,
      3_000,
      () => {
        if (answers.shift()) return true;
        throw new Error('store down');
      },
      (loss) => lost.push(loss),
    );
    await clock.advanceAsync(6_000);
    expect(lost).toEqual([]);
  });

  it('never overlaps renewals: the next waits for the store to answer the last', async () => {
    const clock = new FakeClock();
    const pending = deferred<boolean>();
    let asked = 0;
    new LeaseKeeper(
      clock,
      3_000,
      () => {
        asked++;
        return pending.promise;
      },
      () => undefined,
    );
    await clock.advanceAsync(2_900);
    expect(asked).toBe(1);
    pending.resolve(true);
    await settle();
    await clock.advanceAsync(1_000);
    expect(asked).toBe(2);
  });

  it('ignores an answer that comes after it was stopped', async () => {
    const clock = new FakeClock();
    const pending = deferred<boolean>();
    const lost: LeaseLoss[] = [];
    const keeper = new LeaseKeeper(
      clock,
      3_000,
      () => pending.promise,
      (loss) => lost.push(loss),
    );
    clock.advance(1_000);
    keeper.stop();
    pending.resolve(false);
    await settle();
    expect(lost).toEqual([]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('refuses a lifetime that is not a positive number', () => {
    const clock = new FakeClock();
    expect(
      () =>
        new LeaseKeeper(
          clock,
          0,
          () => true,
          () => undefined,
        ),
    ).toThrow(RangeError);
    expect(
      () =>
        new LeaseKeeper(
          clock,
          Number.NaN,
          () => true,
          () => undefined,
        ),
    ).toThrow(RangeError);
  });
});
