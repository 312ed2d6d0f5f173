import type { Clock } from '../common';
import type { Abortable } from './abortable';
import type { AdaptiveLimit, LimitAlgorithm } from './adaptive';
import type { PriorityClass } from './priority';

/** Why a lane refused a call at admission. A plain string: refusing allocates nothing. */
export type LaneRejection = 'queue_full' | 'tenant_queue_full' | 'stopped';

export interface LaneOptions {
  name: string;
  /** Calls running at once (C), an integer of at least 1; an adaptive lane's starting limit. */
  concurrency: number;
  /** Calls waiting at once (Q); 0 means start now or refuse. An adaptive lane's scales with its limit. */
  queueCapacity: number;
  /** How long a call may wait for a slot. @default 30000 */
  queueTtlMs?: number;
  /** Most waiting calls one tenant may hold. @default queueCapacity */
  maxQueuedPerTenant?: number;
  /** A limit that moves with the dependency's latency, from `concurrency` on; a fixed one otherwise. */
  adaptive?: AdaptiveLimit;
  clock: Clock;
}

export interface LaneCall {
  /** Fairness key: waiting calls are served round-robin across tenants. */
  tenant?: string;
  /** The caller's cancellation; aborting it while waiting frees the queue slot at once. */
  abort?: Abortable;
  /** How long this call may wait, if shorter than the lane's. */
  queueTtlMs?: number;
  /** Its class: a higher one waits ahead of lower ones, and takes a full queue's lowest newest place. @default 'standard' */
  priority?: PriorityClass;
}

/**
 * A call's work as the lane sees it: an object, so admitting it allocates nothing beyond the
 * lane's own record of it (no promise, no closure). {@link Lane.run} wraps a task in one.
 */
export interface LaneWork {
  /** Runs when the call takes a slot; the slot is held until what it returns settles. */
  start(): unknown;
  /** Once the slot is free again: how `start`'s outcome settled (not after {@link refuse}). */
  done?(outcome: unknown, succeeded: boolean): void;
  /**
   * The call is answered without its work's outcome: its queue TTL passed or its caller
   * aborted while it waited (its work never starts), or the lane was stopped (also while it
   * runs; the slot is still held until the work settles). Called at most once, never after
   * {@link done}.
   */
  refuse(reason: unknown): void;
  /**
   * What the outcome tells an adaptive limit, for work whose `start` settles otherwise than its
   * call (it answers its caller itself). Read as for {@link Lane.run} when absent.
   */
  limitSignal?(outcome: unknown, succeeded: boolean): LimitSignal;
}

/**
 * What an ended call tells an adaptive limit: its time counts (`sample`), it timed out
 * (`drop`: overload, whatever its time), or it says nothing of the dependency (`ignore`: its
 * caller left, a refusal of ours, a failure that is no sign of load).
 */
export type LimitSignal = 'sample' | 'drop' | 'ignore';

export interface LaneSnapshot {
  active: number;
  waiting: number;
  /** `waiting` by priority class. */
  waitingByClass: Record<PriorityClass, number>;
  /** As configured: an adaptive lane's starting limit. */
  concurrency: number;
  /** As configured: an adaptive lane's queue at its starting limit. */
  queueCapacity: number;
  /** The most calls ever seen running at once: the proof of isolation, not the config. */
  peakActive: number;
  /** An adaptive lane's: calls that may run at once now (a fixed lane's is `concurrency`). */
  limit?: number;
  /** An adaptive lane's: calls that may wait now (a fixed lane's is `queueCapacity`). */
  queueLimit?: number;
  /** An adaptive lane's algorithm and bounds. */
  adaptive?: { algorithm: LimitAlgorithm; min: number; max: number };
}

/** Cumulative counts since the lane was built. */
export interface LaneStats {
  accepted: number;
  queueFull: number;
  tenantQueueFull: number;
  stopped: number;
  cancelledQueued: number;
  cancelledRunning: number;
  expired: number;
  /** Accepted calls refused while they waited: a higher class took their place, or a shrinking limit shed them. */
  displaced: number;
}
