import { LazyAbortController, ResilienceError } from '../common';
import { FakeClock, settle } from '../common/fake-clock';
import { deferred, track } from '../../test/support/deferred';
import type { ToolArguments } from '../dispatch/tool';
import { IdempotencyService, type IdempotencyDecision, type IdempotencyLead } from './idempotency.service';
import type { IdempotencyStore, StoredOutcome } from './idempotency.store';
import { DEFAULT_IDEMPOTENCY_BOUNDS } from './idempotency-bounds';
import { MemoryIdempotencyStore } from './memory-idempotency.store';

const RETENTION_MS = 60_000;
const LEASE_MS = 10_000;
const POLL_MS = 100;
const KEY = 'scoped-key-7f3a';
const ARGS: ToolArguments = { card: '4242-4242', amount: 100, meta: { currency: 'EUR', note: 'x' } };
/** The same arguments, keys in another order. */
const SAME_ARGS: ToolArguments = { meta: { note: 'x', currency: 'EUR' }, amount: 100, card: '4242-4242' };
const OTHER_ARGS: ToolArguments = { card: '4242-4242', amount: 999, meta: { currency: 'EUR', note: 'x' } };

const SUCCESS: StoredOutcome = { ok: true, result: { chargeId: 'ch_1' }, attempts: 2, pool: 'normal' };
const FAILURE: StoredOutcome = { ok: false, kind: 'transient', message: 'upstream answered 503', attempts: 3 };
const REFUSAL: StoredOutcome = {
  ok: false,
  kind: 'queue_full',
  message: 'lane is full',
  attempts: 0,
  retryAfterMs: 1000,
};

function setup(maxEntries = 100) {
  const clock = new FakeClock();
  const store = new MemoryIdempotencyStore(clock, { ...DEFAULT_IDEMPOTENCY_BOUNDS, maxEntries });
  const options = { idempotency: { retentionMs: RETENTION_MS, maxEntries } };
  const replica = () => new IdempotencyService(store, options, clock);
  /**
   * A replica whose renewals do not reach the store while `link.up` is false (a partition, or a
   * process that died: nothing renews its claims), so its leases lapse as a dead replica's do.
   */
  const link = { up: false };
  const unrenewing = () =>
    new IdempotencyService(
      {
        claim: (...args) => store.claim(...args),
        complete: (...args) => store.complete(...args),
        release: (...args) => store.release(...args),
        renew: (...args) => (link.up ? store.renew(...args) : Promise.reject(new Error('unreachable'))),
      },
      options,
      clock,
    );
  return { clock, store, service: replica(), replica, unrenewing, link };
}

function begin(service: IdempotencyService, args: ToolArguments = ARGS, abort = new LazyAbortController()) {
  return service.begin(KEY, 'tenant', args, LEASE_MS, abort);
}

function asLead(decision: IdempotencyDecision): IdempotencyLead {
  if (decision.kind !== 'lead') throw new Error(`expected to lead, got ${decision.kind}`);
  return decision;
}

/** What the pipeline does with a decision: run the call when leading, else take the outcome given. */
async function call(
  service: IdempotencyService,
  args: ToolArguments,
  execute: () => Promise<StoredOutcome>,
): Promise<{ kind: IdempotencyDecision['kind']; outcome: StoredOutcome }> {
  const decision = await begin(service, args);
  switch (decision.kind) {
    case 'lead': {
      const outcome = await execute();
      await decision.finish(outcome, true);
      return { kind: 'lead', outcome };
    }
    case 'join':
      return { kind: 'join', outcome: await decision.outcome };
    case 'replay':
      return { kind: 'replay', outcome: decision.outcome };
  }
}

describe('IdempotencyService', () => {
  describe('in one process', () => {
    it('lets the first call lead and the second join it, running it once for both', async () => {
      const { service } = setup();
      const running = deferred<StoredOutcome>();
      let executions = 0;
      const execute = () => {
        executions++;
        return running.promise;
      };

      const first = track(call(service, ARGS, execute));
      const second = track(call(service, SAME_ARGS, execute));
      await settle();
      expect([first.state, second.state]).toEqual(['pending', 'pending']);

      running.resolve(SUCCESS);
      await settle();

      expect(executions).toBe(1);
      expect(first.value).toEqual({ kind: 'lead', outcome: SUCCESS });
      expect(second.value).toEqual({ kind: 'join', outcome: SUCCESS });
    });

    it("resolves a joiner's outcome only when the leader finishes, with the leader's outcome", async () => {
      const { service } = setup();
      const lead = asLead(await begin(service));
      const join = await begin(service, SAME_ARGS);
      if (join.kind !== 'join') throw new Error(`expected to join, got ${join.kind}`);
      const joined = track(join.outcome);

      await settle();
      expect(joined.state).toBe('pending');

      await lead.finish(FAILURE, true);
      await settle();
      expect(joined.state).toBe('fulfilled');
      expect(joined.value).toBe(FAILURE);
    });

    it.each<[string, StoredOutcome]>([
      ['a success', SUCCESS],
      ['an error', FAILURE],
    ])('replays %s after the leader finished a call that started', async (_label, outcome) => {
      const { service } = setup();
      const lead = asLead(await begin(service));
      await lead.finish(outcome, true);

      await expect(begin(service, SAME_ARGS)).resolves.toStrictEqual({ kind: 'replay', outcome });
      await expect(begin(service)).resolves.toStrictEqual({ kind: 'replay', outcome });
    });

    it('stores nothing for a call that never started: the next call leads, even with other arguments', async () => {
      const { service } = setup();
      const lead = asLead(await begin(service));
      await lead.finish(REFUSAL, false);

      const next = asLead(await begin(service));
      await next.finish(SUCCESS, false);
      await expect(begin(service, OTHER_ARGS)).resolves.toMatchObject({ kind: 'lead' });
    });

    it('hands a refusal to the calls that joined a leader that never started', async () => {
      const { service } = setup();
      const lead = asLead(await begin(service));
      const join = await begin(service);
      if (join.kind !== 'join') throw new Error(`expected to join, got ${join.kind}`);

      await lead.finish(REFUSAL, false);

      await expect(join.outcome).resolves.toBe(REFUSAL);
    });

    it.each([
      ['while the first call runs', false],
      ['after the first call finished', true],
    ])(
      'throws idempotency_conflict (422) for other arguments %s, without echoing the key or the arguments',
      async (_label, finished) => {
        const { service } = setup();
        const lead = asLead(await begin(service));
        if (finished) await lead.finish(SUCCESS, true);

        const error = await begin(service, OTHER_ARGS).then(
          () => undefined,
          (reason: unknown) => reason,
        );

        expect(error).toBeInstanceOf(ResilienceError);
        const conflict = error as ResilienceError;
        expect(conflict.kind).toBe('idempotency_conflict');
        expect(conflict.status).toBe(422);
        expect(conflict.attempts).toBe(0);
        expect(conflict.message).not.toContain(KEY);
        for (const text of ['4242', '999', 'EUR', 'amount', 'card']) expect(conflict.message).not.toContain(text);
      },
    );

    it('replays for retentionMs after the finish, then lets the key run again', async () => {
      const { clock, service } = setup();
      clock.advance(1_234);
      const lead = asLead(await begin(service));
      clock.advance(500);
      await lead.finish(SUCCESS, true);

      clock.advance(RETENTION_MS - 1);
      await expect(begin(service)).resolves.toMatchObject({ kind: 'replay', outcome: SUCCESS });

      clock.advance(1);
      await expect(begin(service)).resolves.toMatchObject({ kind: 'lead' });
    });

    it('lets other arguments use the key once its outcome has expired', async () => {
      const { clock, service } = setup();
      await asLead(await begin(service)).finish(SUCCESS, true);

      clock.advance(RETENTION_MS);

      await expect(begin(service, OTHER_ARGS)).resolves.toMatchObject({ kind: 'lead' });
    });

    it('keeps keys apart: another key leads while the first runs', async () => {
      const { service } = setup();
      asLead(await begin(service));

      await expect(
        service.begin('another-scoped-key', 'tenant', ARGS, LEASE_MS, new LazyAbortController()),
      ).resolves.toMatchObject({ kind: 'lead' });
    });

    it('joins the call that took over an expired claim, even after the call it took over finishes', async () => {
      const { clock, unrenewing } = setup();
      const service = unrenewing();
      const stale = asLead(await begin(service));
      await clock.advanceAsync(LEASE_MS);
      const current = asLead(await begin(service));
      // The first call comes back late: its claim was lost, and it must not unhook the current one.
      await stale.finish(FAILURE, true);

      const next = track(begin(service));
      await settle();

      expect(next.state).toBe('fulfilled');
      const decision = next.value!;
      if (decision.kind !== 'join') throw new Error(`expected to join, got ${decision.kind}`);
      await current.finish(SUCCESS, true);
      await expect(decision.outcome).resolves.toBe(SUCCESS);
    });
  });

  describe('across replicas sharing one store', () => {
    it('polls every 100 ms while another replica runs the key, and replays its outcome at the next poll', async () => {
      const { clock, replica } = setup();
      const first = replica();
      const second = replica();
      const lead = asLead(await begin(first));

      const waiting = track(begin(second, SAME_ARGS));
      await settle();
      expect(waiting.state).toBe('pending');
      // The poll, and the leader's next renewal.
      expect(clock.pendingTimers).toBe(2);

      await clock.advanceAsync(2 * POLL_MS + 50);
      expect(waiting.state).toBe('pending');
      expect(clock.pendingTimers).toBe(2);

      await lead.finish(SUCCESS, true);
      await clock.advanceAsync(POLL_MS / 2 - 1);
      expect(waiting.state).toBe('pending');

      await clock.advanceAsync(1);
      expect(clock.now()).toBe(3 * POLL_MS);
      expect(waiting.state).toBe('fulfilled');
      expect(waiting.value).toStrictEqual({ kind: 'replay', outcome: SUCCESS });
      expect(clock.pendingTimers).toBe(0);
    });

    it('counts the poll interval from when the waiting call began', async () => {
      const { clock, replica } = setup();
      const first = replica();
      const second = replica();
      const lead = asLead(await begin(first));
      clock.advance(30);

      const waiting = track(begin(second));
      await settle();
      await clock.advanceAsync(20);
      await lead.finish(FAILURE, true);

      await clock.advanceAsync(POLL_MS - 21);
      expect(waiting.state).toBe('pending');
      await clock.advanceAsync(1);
      expect(clock.now()).toBe(30 + POLL_MS);
      expect(waiting.value).toStrictEqual({ kind: 'replay', outcome: FAILURE });
    });

    it('leads at the next poll when the other replica releases the key, and its outcome is then stored', async () => {
      const { clock, replica } = setup();
      const first = replica();
      const second = replica();
      const lead = asLead(await begin(first));
      const waiting = track(begin(second));
      await clock.advanceAsync(POLL_MS);

      await lead.finish(REFUSAL, false);
      expect(waiting.state).toBe('pending');
      await clock.advanceAsync(POLL_MS);

      expect(waiting.state).toBe('fulfilled');
      expect(waiting.value?.kind).toBe('lead');
      // No poll: only the new leader's renewal.
      expect(clock.pendingTimers).toBe(1);
      await asLead(waiting.value!).finish(SUCCESS, true);
      expect(clock.pendingTimers).toBe(0);
      await expect(begin(first)).resolves.toStrictEqual({ kind: 'replay', outcome: SUCCESS });
    });

    it('takes over at the first poll after the lease of the other replica has passed, and ignores its late outcome', async () => {
      const { clock, replica, unrenewing } = setup();
      const dead = unrenewing();
      const survivor = replica();
      const lost = asLead(await begin(dead));
      const waiting = track(begin(survivor));

      await clock.advanceAsync(LEASE_MS - POLL_MS);
      expect(waiting.state).toBe('pending');
      await clock.advanceAsync(POLL_MS);
      expect(waiting.state).toBe('fulfilled');
      expect(waiting.value?.kind).toBe('lead');

      await lost.finish(FAILURE, true);
      const retry = track(begin(dead));
      await clock.advanceAsync(POLL_MS);
      expect(retry.state).toBe('pending');

      await asLead(waiting.value!).finish(SUCCESS, true);
      await clock.advanceAsync(POLL_MS);
      expect(retry.value).toStrictEqual({ kind: 'replay', outcome: SUCCESS });
    });

    it("stops polling with the abort's reason when the waiting call's controller aborts", async () => {
      const { clock, replica } = setup();
      const first = replica();
      const second = replica();
      const lead = asLead(await begin(first));
      const abort = new LazyAbortController();
      const waiting = track(begin(second, ARGS, abort));
      await clock.advanceAsync(POLL_MS + 10);
      expect(waiting.state).toBe('pending');

      const reason = new ResilienceError('stopped', 'the caller went away');
      abort.abort(reason);
      await settle();

      expect(waiting.state).toBe('rejected');
      expect(waiting.reason).toBe(reason);
      // Only the leader's renewal.
      expect(clock.pendingTimers).toBe(1);

      // The leader is untouched by the waiter's abort.
      await lead.finish(SUCCESS, true);
      await expect(begin(second)).resolves.toStrictEqual({ kind: 'replay', outcome: SUCCESS });
    });

    it("rejects with the abort's reason at once when the controller had aborted before a poll was needed", async () => {
      const { clock, replica } = setup();
      const first = replica();
      const second = replica();
      asLead(await begin(first));
      const abort = new LazyAbortController();
      const reason = new Error('gone');
      abort.abort(reason);

      await expect(begin(second, ARGS, abort)).rejects.toBe(reason);
      // Only the leader's renewal.
      expect(clock.pendingTimers).toBe(1);
    });

    it('keeps the claim while its leader renews it: another replica waits past the first lease, then replays', async () => {
      const { clock, replica } = setup();
      const first = replica();
      const second = replica();
      const lead = asLead(await begin(first));
      await clock.advanceAsync(LEASE_MS - POLL_MS);

      await expect(lead.renew(LEASE_MS)).resolves.toBe(true);
      const waiting = track(begin(second));
      await clock.advanceAsync(3 * POLL_MS);
      expect(waiting.state).toBe('pending');

      await lead.finish(SUCCESS, true);
      await clock.advanceAsync(POLL_MS);
      expect(waiting.value).toStrictEqual({ kind: 'replay', outcome: SUCCESS });
    });

    it("renews a leader's claim for as long as its call runs: another replica still waits three leases later", async () => {
      const { clock, replica } = setup();
      const first = replica();
      const second = replica();
      const lead = asLead(await begin(first));
      const waiting = track(begin(second));

      await clock.advanceAsync(3 * LEASE_MS);
      expect(waiting.state).toBe('pending');

      await lead.finish(SUCCESS, true);
      expect(clock.pendingTimers).toBe(1); // the poll: the finished leader renews nothing more
      await clock.advanceAsync(POLL_MS);
      expect(waiting.value).toStrictEqual({ kind: 'replay', outcome: SUCCESS });
      expect(clock.pendingTimers).toBe(0);
    });

    it('throws idempotency_conflict on another replica for other arguments', async () => {
      const { replica } = setup();
      const first = replica();
      const second = replica();
      asLead(await begin(first));

      await expect(begin(second, OTHER_ARGS)).rejects.toMatchObject({ kind: 'idempotency_conflict', status: 422 });
    });
  });

  describe("the leader's renew", () => {
    it('answers false once the call finished', async () => {
      const { service } = setup();
      const lead = asLead(await begin(service));
      await lead.finish(SUCCESS, true);

      await expect(lead.renew(LEASE_MS)).resolves.toBe(false);
      await expect(begin(service)).resolves.toStrictEqual({ kind: 'replay', outcome: SUCCESS });
    });

    it('answers false once another call took the claim over after its lease, leaving that one be', async () => {
      const { clock, replica, unrenewing, link } = setup();
      const dead = asLead(await begin(unrenewing()));
      await clock.advanceAsync(LEASE_MS);
      const survivor = asLead(await begin(replica()));

      link.up = true;
      await expect(dead.renew(LEASE_MS)).resolves.toBe(false);
      await expect(survivor.renew(LEASE_MS)).resolves.toBe(true);
    });

    it('rejects unavailable, not false, when the store fails', async () => {
      const clock = new FakeClock();
      const memory = new MemoryIdempotencyStore(clock, { ...DEFAULT_IDEMPOTENCY_BOUNDS, maxEntries: 100 });
      const cause = new Error('connection lost');
      const store: IdempotencyStore = {
        claim: (...args) => memory.claim(...args),
        complete: (...args) => memory.complete(...args),
        release: (...args) => memory.release(...args),
        renew: () => Promise.reject(cause),
      };
      const service = new IdempotencyService(
        store,
        { idempotency: { retentionMs: RETENTION_MS, maxEntries: 100 } },
        clock,
      );
      const lead = asLead(await begin(service));

      await expect(lead.renew(LEASE_MS)).rejects.toMatchObject({ kind: 'unavailable', cause });
      await expect(lead.renew(LEASE_MS)).rejects.toBeInstanceOf(ResilienceError);
    });

    it('rejects with the RangeError itself for an impossible lease: a bug, not the store down', async () => {
      const { service } = setup();
      const lead = asLead(await begin(service));

      await expect(lead.renew(0)).rejects.toBeInstanceOf(RangeError);
    });
  });
});
