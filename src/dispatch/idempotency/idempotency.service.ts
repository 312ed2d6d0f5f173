import { Inject, Injectable, Logger } from '@nestjs/common';
import { CLOCK, type Clock, deferred, type LazyAbortController, ResilienceError, sleep } from '../../common';
import { DISPATCH_MODULE_OPTIONS, type DispatchModuleOptions } from '../dispatch.module-definition';
import type { ToolArguments } from '../tool';
import { argumentsFingerprint } from './fingerprint';
import { IdempotencyStore, type StoredOutcome } from './idempotency.store';

/** How long a finished call's outcome is replayed when the options do not say. */
const DEFAULT_RETENTION_MS = 60_000;
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
    @Inject(DISPATCH_MODULE_OPTIONS) private readonly options: DispatchModuleOptions,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * Decides for a call with the scoped `key`. `leaseMs` bounds how long its claim holds if
   * this process dies with it; `abort` ends a wait for another replica's call.
   */
  async begin(
    key: string,
    args: ToolArguments,
    leaseMs: number,
    abort: LazyAbortController,
  ): Promise<IdempotencyDecision> {
    const fingerprint = argumentsFingerprint(args);
    for (;;) {
      let claim;
      try {
        claim = await this.store.claim(key, fingerprint, leaseMs);
      } catch (error) {
        // Without the store a key can neither be honoured nor ignored safely: refuse the call.
        throw new ResilienceError('unavailable', 'the idempotency store is unavailable', { cause: error });
      }
      switch (claim.status) {
        case 'claimed':
          return this.lead(key, claim.token);
        case 'completed':
          return { kind: 'replay', outcome: claim.outcome };
        case 'conflict':
          throw new ResilienceError('idempotency_conflict', 'this Idempotency-Key was used with other arguments');
        case 'in_flight': {
          const here = this.running.get(key);
          if (here) return { kind: 'join', outcome: here };
          // Another replica runs it: look again shortly, for its outcome or its claim gone.
          await sleep(this.clock, IN_FLIGHT_POLL_MS, abort.signal);
        }
      }
    }
  }

  private lead(key: string, token: string): IdempotencyLead {
    const shared = deferred<StoredOutcome>();
    this.running.set(key, shared.promise);
    const retentionMs = this.options.idempotency?.retentionMs ?? DEFAULT_RETENTION_MS;
    return {
      kind: 'lead',
      finish: async (outcome, started) => {
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
    };
  }
}
