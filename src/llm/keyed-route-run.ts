import type { LazyAbortController } from '../common';
import type { RouteCall } from './route-call';
import type { PoolName } from '../containment';
import { scopedIdempotencyKey, type KeyedRun, type StoredOutcome } from '../idempotency';
import type { FailoverProgress } from './routing/failover';
import type { LlmRoute } from './routing/llm-route';

/**
 * A request to an LLM route with an `Idempotency-Key`, as IdempotencyService.runOnce runs it:
 * the first request with a key runs to its end even if its client leaves, so that the client's
 * retry gets its answer instead of paying for a second one; a request with the same key while it
 * runs joins it, and one after it is answered the same (`replayed`, cost 0) for the retention
 * window. The same key with another request (another `fingerprinted`) is
 * `idempotency_conflict`. Keys are the route's own (`llm.<route>`), whatever the kind of request:
 * each kind labels what it fingerprints, so none replays another's answer. A kind says how a
 * stored answer is replayed.
 */
export abstract class KeyedRouteRun<R> implements KeyedRun<R> {
  readonly key: string;
  readonly tenant: string;
  readonly abort: LazyAbortController;
  readonly pool: PoolName;

  constructor(
    call: RouteCall,
    route: LlmRoute,
    idempotencyKey: string,
    /** What the same key must ask again to be answered the same. */
    readonly fingerprinted: unknown,
    readonly leaseMs: number,
    private readonly progress: FailoverProgress,
    private readonly execute: (abort: LazyAbortController) => Promise<R>,
  ) {
    this.key = scopedIdempotencyKey(call.tenant, `llm.${route.name}`, idempotencyKey);
    this.tenant = call.tenant;
    this.abort = call.abort;
    this.pool = call.pool;
  }

  get attempts(): number {
    return this.progress.attempts;
  }

  get started(): boolean {
    return this.progress.attempts > 0;
  }

  abstract replay(outcome: StoredOutcome): R;

  run(abort: LazyAbortController): Promise<R> {
    return this.execute(abort);
  }
}
