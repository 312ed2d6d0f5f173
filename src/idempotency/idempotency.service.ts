import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  asResilienceError,
  type Awaitable,
  CLOCK,
  type Clock,
  deferred,
  isPromiseLike,
  LazyAbortController,
  LeaseKeeper,
  raceWithAbort,
  ResilienceError,
  sleep,
  uniqueIds,
} from '../common';
import { argumentsFingerprint } from './fingerprint';
import { DEFAULT_RETENTION_MS } from './idempotency-bounds';
import { IDEMPOTENCY_MODULE_OPTIONS, type IdempotencyModuleOptions } from './idempotency.module-definition';
import { IdempotencyStore, type StoredOutcome } from './idempotency.store';
import type { KeyedRun } from './keyed-run';
import { releaseLostClaim } from './lost-claim-release';
import { toStored } from './stored-outcomes';

/** How often a call looks again at a key another replica is running. */
const IN_FLIGHT_POLL_MS = 100;

/** What a call with an idempotency key does. */
export type IdempotencyDecision =
  /** Run it, then {@link IdempotencyLead.finish}. */
  | IdempotencyLead
  /** Wait for the call with this key that runs in this process. */
  | { kind: 'join'; outcome: Promise<StoredOutcome> }
  /** Answer with the stored outcome. */
  | { kind: 'replay'; outcome: StoredOutcome };

export interface IdempotencyLead {
  kind: 'lead';
  /**
   * Hands the outcome to the calls that joined, and stores it for the retention window if
   * the call started (a call refused before it ran stores nothing; a retry may run it).
   */
  finish(outcome: StoredOutcome, started: boolean): Promise<void>;
  /**
   * Keeps the claim for `leaseMs` more from now (never less than it held already), for a call
   * that outlives its lease (a stream). False once the claim is lost (finished, or lapsed and
   * perhaps taken over): another call may run the key. Rejects `unavailable` when the store
   * fails, so a caller tells a lost claim from a store down; a RangeError for an impossible
   * lease is passed on as it is.
   */
  renew(leaseMs: number): Promise<boolean>;
}

/**
 * Step 6 of the pipeline: a second call with the same key (in the same tenant and tool)
 * joins the first while it runs, and gets its outcome replayed after, for the retention
 * window; the same key with other arguments is `idempotency_conflict`.
 */
@Injectable()
export class IdempotencyService {
  private readonly logger = new Logger('Bulkhead');
  /** Outcomes of the keyed calls running in this process, for the calls that join them. */
  private readonly running = new Map<string, Promise<StoredOutcome>>();

  constructor(
    @Inject(IdempotencyStore) private readonly store: IdempotencyStore,
    @Inject(IDEMPOTENCY_MODULE_OPTIONS) private readonly options: IdempotencyModuleOptions,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * Runs a keyed call at most once per key: the first call with a key runs to its end even if
   * its caller goes away (only shutdown stops it), so that a retry with the same key gets its
   * outcome instead of running it twice; calls with the key while it runs join it, and those
   * after it get its outcome again for the retention window (`replay`). Both the tool pipeline
   * and the LLM route run their keyed calls through here.
   */
  async runOnce<T>(work: KeyedRun<T>): Promise<T> {
    let waited = false;
    const decision = await this.begin(
      work.key,
      work.tenant,
      work.fingerprinted,
      work.leaseMs,
      work.abort,
      work.beforeWaiting &&
        (() => {
          waited = true;
          return work.beforeWaiting!();
        }),
    );
    if (decision.kind !== 'lead') {
      const following = work.follows?.();
      if (isPromiseLike(following)) await following;
      const outcome = decision.kind === 'join' ? await raceWithAbort(decision.outcome, work.abort) : decision.outcome;
      return work.replay(outcome);
    }
    if (waited && work.leadAfterWaiting) {
      try {
        const holding = work.leadAfterWaiting();
        if (isPromiseLike(holding)) await holding;
      } catch (error) {
        // Refused before it ran: the key stays free for a retry.
        await decision.finish(toStored(asResilienceError(error)), false);
        throw error;
      }
    }
    let outcome: StoredOutcome | undefined;
    try {
      const result = await work.run(new LazyAbortController());
      outcome = { ok: true, result: result === undefined ? null : result, attempts: work.attempts, pool: work.pool };
      return result;
    } catch (error) {
      outcome = toStored(asResilienceError(error).withAttempts(work.attempts));
      throw error;
    } finally {
      await decision.finish(outcome!, work.started);
    }
  }

  /**
   * Decides for a call of `tenant` with the scoped `key` (the tenant's outcomes count against its
   * bytes in the store). `leaseMs` bounds how long its claim holds if
   * this process dies with it (`leaseLifetimeMs`); while this process runs the call, a lead's
   * claim is renewed for as long again every third of it until `finish`, so a call that outlives
   * its lease (a stream) is never run a second time. `args` is what the call was asked (JSON): the
   * same key with other arguments is a conflict. `abort` ends a wait for another replica's call.
   * `beforeWaiting` runs once, before the first wait for another replica's call: such a wait may
   * outlast anything the caller holds for its own run (money), so the caller gives it back there
   * and holds it again if it ends up the lead.
   */
  async begin(
    key: string,
    tenant: string,
    args: unknown,
    leaseMs: number,
    abort: LazyAbortController,
    beforeWaiting?: () => Awaitable<void>,
  ): Promise<IdempotencyDecision> {
    const fingerprint = argumentsFingerprint(args);
    let waited = false;
    for (;;) {
      let claim;
      // Made once per claim: a client re-sending this claim sends this token, and the store
      // answers `claimed` to the claim that wrote the record rather than `in_flight`.
      const token = uniqueIds.next();
      try {
        claim = await this.store.claim(key, fingerprint, leaseMs, tenant, token);
      } catch (error) {
        // The store may have run the claim all the same (a reply lost, a command timed out on a
        // stalled store): give it back once the store answers, or the key waits a whole lease.
        void releaseLostClaim(this.store, this.clock, { key, token, leaseMs });
        // Without the store a key can neither be honoured nor ignored safely: refuse the call.
        throw new ResilienceError('unavailable', 'the idempotency store is unavailable', { cause: error });
      }
      switch (claim.status) {
        case 'claimed':
          return this.lead(key, claim.token, leaseMs);
        case 'completed':
          return { kind: 'replay', outcome: claim.outcome };
        case 'conflict':
          throw new ResilienceError('idempotency_conflict', 'this Idempotency-Key was used with other arguments');
        case 'in_flight': {
          const here = this.running.get(key);
          if (here) return { kind: 'join', outcome: here };
          // Another replica runs it: look again shortly, for its outcome or its claim gone.
          if (!waited) {
            waited = true;
            if (beforeWaiting) await beforeWaiting();
          }
          await sleep(this.clock, IN_FLIGHT_POLL_MS, abort.signal);
        }
      }
    }
  }

  private lead(key: string, token: string, leaseMs: number): IdempotencyLead {
    const shared = deferred<StoredOutcome>();
    this.running.set(key, shared.promise);
    const retentionMs = this.options.idempotency?.retentionMs ?? DEFAULT_RETENTION_MS;
    const lead: IdempotencyLead = {
      kind: 'lead',
      finish: async (outcome, started) => {
        keeper.stop();
        try {
          if (started) await this.store.complete(key, token, outcome, retentionMs);
          else await this.store.release(key, token);
        } catch (error) {
          this.logger.warn(`idempotency store failed to record an outcome: ${(error as Error).name}`);
        } finally {
          // A call that took over this key after our lease passed owns the entry now.
          if (this.running.get(key) === shared.promise) this.running.delete(key);
          shared.resolve(outcome);
        }
      },
      renew: async (leaseMs) => {
        try {
          return await this.store.renew(key, token, leaseMs);
        } catch (error) {
          if (error instanceof RangeError) throw error;
          throw new ResilienceError('unavailable', 'the idempotency store is unavailable', { cause: error });
        }
      },
    };
    const keeper = new LeaseKeeper(
      this.clock,
      leaseMs,
      (ttlMs) => lead.renew(ttlMs),
      (loss) =>
        // The key and its tool stay out of the log (the key is the caller's); what happens next does not.
        this.logger.warn(
          `the idempotency claim of a call in flight was ${loss === 'gone' ? 'lost' : 'not renewed (store unreachable)'}: ` +
            'a repeat of its key may run it again',
        ),
    );
    return lead;
  }
}
