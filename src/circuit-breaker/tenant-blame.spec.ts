import { deferred, ResilienceError } from '../common';
import { FakeClock } from '../common/fake-clock';
import { breakersInVirtualTime } from '../../test/support/breakers-in-virtual-time';
import { advanceClocks } from '../../test/support/fake-timers';
import { Breaker } from './breaker';
import type { BreakerSettings } from './breaker-settings';

// TenantBlame through the Breaker that owns it: what a tenant's outcomes do to its own circuit
// and to the shared window. opossum's reset timer runs on jest's fake timers (advanceClocks).

const SETTINGS: BreakerSettings = {
  errorThresholdPercentage: 50,
  volumeThreshold: 4,
  resetTimeoutMs: 5_000,
  rollingCountTimeoutMs: 10_000,
};

const made: Breaker[] = [];
let clock: FakeClock;

function breaker(): Breaker {
  const created = new Breaker('search', SETTINGS, clock);
  made.push(created);
  return created;
}

const transient = () => new ResilienceError('transient', 'upstream answered 500');
const stopped = () => new ResilienceError('stopped', 'the client went away');
const schema = () => new ResilienceError('schema', 'upstream answered 422');

/** One attempt of `tenant` that rejects with `error`; resolves once the breaker has seen it. */
const rejectAs = (target: Breaker, tenant: string, error: ResilienceError) =>
  target.fire(() => Promise.reject(error), tenant).catch(() => undefined);
const failAs = (target: Breaker, tenant: string) => rejectAs(target, tenant, transient());
const succeedAs = (target: Breaker, tenant: string) => target.fire(async () => 'ok', tenant);

/** Alpha refused on its own (its four failures against bravo's success), its time up: its next call probes. */
async function alphaBlamedAndDue(): Promise<Breaker> {
  const target = breaker();
  await succeedAs(target, 'bravo');
  for (let i = 0; i < 4; i++) await failAs(target, 'alpha');
  expect(target.refusal('alpha')).toMatchObject({ kind: 'circuit_open', retryAfterMs: SETTINGS.resetTimeoutMs });
  advanceClocks(clock, SETTINGS.resetTimeoutMs);
  expect(target.refusal('alpha')).toBeUndefined();
  return target;
}

breakersInVirtualTime(made, (fresh) => (clock = fresh));

describe('a blamed tenant lifts its own refusal only by a real success', () => {
  it.each([
    ['stopped (its client left)', stopped],
    ['schema (a 4xx answer)', schema],
    ['not_found', () => new ResilienceError('not_found', 'upstream answered 404')],
  ])('keeps the tenant refused when its probe ends %s; its next call is its probe', async (_how, error) => {
    const target = await alphaBlamedAndDue();

    await rejectAs(target, 'alpha', error());

    expect(target.snapshot().tenantsOpen).toEqual([{ tenant: 'alpha', retryAfterMs: 0 }]);
    // Its probe slot is free: one call goes through as its probe, and its others wait meanwhile.
    expect(target.refusal('alpha')).toBeUndefined();
    const answer = deferred<string>();
    const probe = target.fire(() => answer.promise, 'alpha');
    expect(target.refusal('alpha')).toMatchObject({ kind: 'circuit_open', retryAfterMs: 1_000 });
    expect(target.refusal('bravo')).toBeUndefined();

    answer.resolve('ok');
    await expect(probe).resolves.toBe('ok');
    expect(target.refusal('alpha')).toBeUndefined();
    expect(target.snapshot().tenantsOpen).toEqual([]);
  });

  it('refuses the tenant again for resetTimeoutMs when the probe after a stopped one fails', async () => {
    const target = await alphaBlamedAndDue();
    await rejectAs(target, 'alpha', stopped());

    await failAs(target, 'alpha');

    expect(target.refusal('alpha')).toMatchObject({ kind: 'circuit_open', retryAfterMs: SETTINGS.resetTimeoutMs });
    expect(target.state).toBe('closed');
  });

  it('frees the tenant’s probe slot only for its probe: an older call stopped while the probe is out changes nothing', async () => {
    const target = breaker();
    await succeedAs(target, 'bravo');
    const older = deferred<string>();
    const olderCall = target.fire(() => older.promise, 'alpha').catch(() => undefined);
    for (let i = 0; i < 4; i++) await failAs(target, 'alpha');
    advanceClocks(clock, SETTINGS.resetTimeoutMs);
    const answer = deferred<string>();
    const probe = target.fire(() => answer.promise, 'alpha');

    older.reject(stopped());
    await olderCall;

    expect(target.refusal('alpha')).toMatchObject({ kind: 'circuit_open', retryAfterMs: 1_000 });
    answer.resolve('ok');
    await probe;
    expect(target.refusal('alpha')).toBeUndefined();
  });
});

describe('padding with disconnects or 4xx answers does not dilute a tenant’s failures', () => {
  /** Bravo's one success, then three failures of alpha's, each after `pad` calls of alpha's that end otherwise. */
  async function alphaFailsThrice(pad: (target: Breaker) => Promise<void>): Promise<Breaker> {
    const target = breaker();
    await succeedAs(target, 'bravo');
    for (let i = 0; i < 3; i++) {
      await pad(target);
      await failAs(target, 'alpha');
    }
    return target;
  }

  const outcome = (target: Breaker) => ({
    state: target.state,
    alpha: target.refusal('alpha')?.kind,
    bravo: target.refusal('bravo')?.kind,
    snapshot: target.snapshot(),
  });

  it('blames a tenant whose failures are padded with stopped and 4xx calls exactly as without the padding', async () => {
    const unpadded = await alphaFailsThrice(async () => undefined);
    const expected = outcome(unpadded);
    expect(expected).toEqual({
      state: 'closed',
      alpha: 'circuit_open',
      bravo: undefined,
      snapshot: {
        state: 'closed',
        failures: 0,
        successes: 1,
        tenantsOpen: [{ tenant: 'alpha', retryAfterMs: SETTINGS.resetTimeoutMs }],
      },
    });

    const padded = await alphaFailsThrice(async (target) => {
      for (let i = 0; i < 3; i++) await rejectAs(target, 'alpha', stopped());
      for (let i = 0; i < 2; i++) await rejectAs(target, 'alpha', schema());
    });

    expect(outcome(padded)).toEqual(expected);
  });

  it.each([
    ['4xx answers', schema],
    ['disconnects', stopped],
  ])(
    'never blames a tenant alone on a dependency that pads its failures with %s: it opens for everyone',
    async (_what, pad) => {
      const target = breaker();
      for (let i = 0; i < 2; i++) await rejectAs(target, 'alpha', pad());
      for (let i = 0; i < 4 && target.state === 'closed'; i++) await failAs(target, 'alpha');

      expect(target.state).toBe('open');
      expect(target.snapshot().tenantsOpen).toEqual([]);
      expect(target.refusal('bravo')?.kind).toBe('circuit_open');
    },
  );
});
