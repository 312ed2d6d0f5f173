import type { PriorityClass } from '../bulkhead';
import type { LazyAbortController } from '../common';
import type { PoolName } from '../containment';
import type { HeaderSink } from '../rate-limit';

/** A validated request to an LLM route, with its caller: what every kind of request carries. */
export interface RouteCall {
  callId: string;
  tenant: string;
  /** The HTTP pool the containment snapshot gave this call. */
  pool: PoolName;
  abort: LazyAbortController;
  /** The request's `Cache-Control`. */
  cacheControl?: string;
  /** Where the RateLimit headers go. */
  headers?: HeaderSink;
  /** The caller's `Idempotency-Key`, validated. */
  idempotencyKey?: string;
  /** The class the caller asked for (`X-Bulkhead-Priority`, a class's name), before its tenant's ceiling. */
  askedPriority?: PriorityClass;
}
